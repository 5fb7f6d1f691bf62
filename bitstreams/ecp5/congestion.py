#!/usr/bin/env python3
"""Where a placed ECP5 design crowds the routing, and whose cells sit there.

    bitstreams/ecp5/congestion.py PLACED.json HEAT.csv [DEPTH] [ROWS]

PLACED.json is the design nextpnr-ecp5 writes with `--write` (after
`--no-route`, or after routing): every cell carries its site in the
`NEXTPNR_BEL` attribute (`X12/Y34/SLICEA`). HEAT.csv is one of router2's
`--router2-heatmap PREFIX` files, `PREFIX_congestion_by_coordinate_N.csv`
(one line per column X, one value per row Y: the overused wires of that
tile after iteration N). Prints the hottest rows and columns, the hottest
tiles and what occupies them (a row full of `DP16KD`s is a block RAM row),
and the cells' owners weighted by the heat of their tiles: a cell's owner is
the hierarchical name of the net it drives, cut at DEPTH dot-separated parts
(default 3); cells whose nets yosys left unnamed count as `?`. ROWS limits
each list (default 12). Standard library only.

A placement alone (`--no-route --write placed.json`) can be routed later
for the heatmap without placing again: `--no-pack --no-place --json
placed.json --router router2 --router2-heatmap heat` (the file's own
`router` setting wins over the command line; edit it to `router2`).
"""

import collections
import csv
import json
import re
import sys


def read_heat(path):
    """The heatmap as heat[x][y]."""
    with open(path, newline="") as f:
        return [[int(v) for v in row if v != ""] for row in csv.reader(f)]


def net_names(top):
    """One name per net bit: a named one before a `$` one, then the shortest."""
    names = {}
    for name, net in top["netnames"].items():
        for bit in net["bits"]:
            if not isinstance(bit, int):
                continue
            old = names.get(bit)
            if old is None or (old.startswith("$"), len(old)) > (name.startswith("$"), len(name)):
                names[bit] = name
    return names


def owner(name, depth):
    """The first DEPTH parts of a hierarchical net name, without bit indices."""
    if name is None or name.startswith("$"):
        return "?"
    return ".".join(re.sub(r"\[\d+\]", "", name).split(".")[:depth])


OUTPUTS = ("F", "Q", "DO0", "DOA0", "DOB0", "F0", "F1", "Q0")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    top = json.load(open(sys.argv[1]))["modules"]["top"]
    heat = read_heat(sys.argv[2])
    depth = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    rows = int(sys.argv[4]) if len(sys.argv) > 4 else 12

    def at(x, y):
        return heat[x][y] if x < len(heat) and y < len(heat[x]) else 0

    by_row = collections.Counter()
    by_col = collections.Counter()
    for x, col in enumerate(heat):
        for y, v in enumerate(col):
            by_row[y] += v
            by_col[x] += v
    total = sum(by_row.values())
    print(f"overused wires in all: {total}")
    print("hottest rows (Y: overused):", by_row.most_common(rows))
    print("hottest columns (X: overused):", by_col.most_common(rows))

    names = net_names(top)
    kinds = collections.defaultdict(collections.Counter)
    load = collections.Counter()
    cells = collections.Counter()
    for cell in top["cells"].values():
        bel = cell.get("attributes", {}).get("NEXTPNR_BEL")
        if not bel:
            continue
        xs, ys, _ = bel.split("/")
        x, y = int(xs[1:]), int(ys[1:])
        kinds[y][cell["type"]] += 1
        bits = [b for p in OUTPUTS for b in cell["connections"].get(p, []) if isinstance(b, int)]
        who = owner(names.get(bits[0]) if bits else None, depth)
        cells[who] += 1
        load[who] += at(x, y)
    print("what the hottest rows hold:")
    for y, v in by_row.most_common(min(rows, 6)):
        print(f"  Y{y} ({v}):", dict(kinds[y].most_common(4)))
    hot = sorted(
        ((v, x, y) for x, col in enumerate(heat) for y, v in enumerate(col) if v), reverse=True
    )
    print("hottest tiles (overused, X, Y):", hot[:rows])
    weight = sum(load.values()) or 1
    print("owners by the heat of their cells' tiles (share, cells, heat per cell):")
    for who, v in load.most_common(rows):
        print(f"  {v / weight * 100:5.1f} %  {cells[who]:6d}  {v / cells[who]:6.2f}  {who}")


if __name__ == "__main__":
    main()
