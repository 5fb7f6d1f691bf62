#!/usr/bin/env python3
"""Which block of a flattened ECP5 netlist its LUTs belong to.

    bitstreams/ecp5/lut_owners.py BOARD.json TOP.v [DEPTH] [ROWS]

BOARD.json is yosys' `write_json` after `synth_ecp5` (flattened); TOP.v the
Verilog it was read from (rust-hdl emits one module per block instance,
named by its path: `top$dev$core$rx`). ABC's LUTs carry no source, so each
LUT4 and CCU2C is given to the module of the nearest sequential cell
(flip-flop, RAM) its output reaches: a breadth-first walk backwards from
every sequential cell's inputs through LUTs, carries and wide muxes. A
register's module is the deepest `TOP.v` module its `src` attribute names;
a cell whose `src` names no line of TOP.v (distributed RAM, flip-flops that
yosys made from a memory or a merged register) goes to the deepest module
whose instance path begins its hierarchical name (`dev.core.rx.mem.0.1`),
or, for an `$auto` name, the name of a net it drives (else one it reads).
Logic that feeds several blocks goes to the nearest, so the split is
approximate. Prints LUT4 and CCU2C per module path cut at DEPTH `$`-separated
parts (default 6), the ROWS largest (default 40). Standard library only.
"""

import bisect
import collections
import json
import sys

COMB = {"LUT4", "CCU2C", "PFUMX", "L6MUX21"}


def module_lines(verilog):
    """Start lines and names of the modules of the Verilog file."""
    starts, names = [], []
    with open(verilog) as f:
        for i, line in enumerate(f, 1):
            if line.startswith("module "):
                starts.append(i)
                names.append(line[7:].split("(")[0].strip())
    return starts, names


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    netlist, verilog = sys.argv[1], sys.argv[2]
    depth = int(sys.argv[3]) if len(sys.argv) > 3 else 6
    rows = int(sys.argv[4]) if len(sys.argv) > 4 else 40
    top_file = verilog.rsplit("/", 1)[-1]
    starts, names = module_lines(verilog)
    top = json.load(open(netlist))["modules"]["top"]
    cells = top["cells"]

    module_set = set(names)
    top_name = names[0] if names else "top"
    net_names = {}
    for net, info in top["netnames"].items():
        if not net.startswith("$"):
            for b in info["bits"]:
                if isinstance(b, int):
                    net_names.setdefault(b, net)

    def module_of_path(path):
        """The deepest module whose instance path begins a dotted name."""
        parts = path.split(".")
        for n in range(len(parts), 0, -1):
            name = "$".join([top_name] + parts[:n])
            if name in module_set:
                return name
        return None

    def owner_of(name, cell):
        src = cell.get("attributes", {}).get("src", "")
        mods = [
            names[bisect.bisect_right(starts, int(loc.split(":")[1].split(".")[0])) - 1]
            for loc in src.split("|")
            if loc.startswith(top_file + ":")
        ]
        if mods:
            return max(mods, key=lambda n: n.count("$"))
        paths = [] if name.startswith("$") else [name]
        for direction in ("output", "input"):
            paths += [net_names[b] for b in ports(cell, direction) if b in net_names]
        for path in paths:
            mod = module_of_path(path)
            if mod:
                return mod
        return "?" + cell["type"]

    def ports(cell, direction):
        dirs = cell.get("port_directions", {})
        for port, bits in cell["connections"].items():
            if dirs.get(port) == direction:
                yield from (b for b in bits if isinstance(b, int))

    driver = {b: name for name, c in cells.items() for b in ports(c, "output")}
    owner, queue = {}, collections.deque()
    for name, c in cells.items():
        if c["type"] not in COMB:
            owner[name] = owner_of(name, c)
            queue.extend((b, owner[name]) for b in ports(c, "input"))
    while queue:
        bit, mod = queue.popleft()
        name = driver.get(bit)
        if name is None or name in owner or cells[name]["type"] not in COMB:
            continue
        owner[name] = mod
        queue.extend((b, mod) for b in ports(cells[name], "input"))

    luts, carries = collections.Counter(), collections.Counter()
    for name, c in cells.items():
        key = "$".join(owner.get(name, "?unreached").split("$")[:depth])
        if c["type"] == "LUT4":
            luts[key] += 1
        elif c["type"] == "CCU2C":
            carries[key] += 1
    total = sum(luts.values())
    print(f"{'LUT4':>7} {'share':>6} {'CCU2C':>6}  module")
    for key, n in luts.most_common(rows):
        print(f"{n:7d} {100 * n / total:5.1f}% {carries[key]:6d}  {key}")
    print(f"{total:7d} LUT4, {sum(carries.values())} CCU2C in all")


if __name__ == "__main__":
    main()
