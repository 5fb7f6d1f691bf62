#!/usr/bin/env bash
# Emits the Verilog the Alveo project reads into $OUT (default ./gen):
# the 512-bit device (module metaroce_device) and the three AXI shims
# (metaroce_axil_bar, metaroce_dma_read, metaroce_dma_write). rust-hdl
# names every emitted top `top`; the rename keeps the four apart.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${OUT:-$here/gen}"
mkdir -p "$out"
cd "$root"
rename() { perl -pe "s/\\btop(?=[\\\$( ])/$1/g"; }
cargo run --release -q -p metaroce-hdl --example emit_device -- 512 | rename metaroce_device > "$out/metaroce_device.v"
for b in axil_bar dma_read dma_write; do
  cargo run --release -q -p metaroce-hdl --example emit_block -- "$b" | rename "metaroce_$b" > "$out/metaroce_$b.v"
done
echo "emitted into $out"
