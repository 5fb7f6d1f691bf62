#!/usr/bin/env bash
# Installs the Debian packages the tests and tools need, when missing.
# Sourced by scripts/test and scripts/demo; safe to run twice.

# Everything the test suite touches: Verilator and yosys for the RTL benches
# and reports, rdma-core's Verbs tools and perftest for the libibverbs
# compatibility tests (and libibverbs-dev for the ABI layout checks), binutils
# for objdump, iperf3 for the loopback comparison script.
METAROCE_TEST_PACKAGES=(verilator yosys ibverbs-utils perftest libibverbs-dev binutils iperf3)

metaroce_install_missing() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "installing: ${missing[*]}" >&2
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >&2
}
