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
