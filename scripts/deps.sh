#!/usr/bin/env bash
# Installs the Debian packages the tests and tools need, when missing.
# Sourced by scripts/test and scripts/demo; safe to run twice.
set -euo pipefail

# command → package
declare -A METAROCE_PACKAGES=(
  [verilator]=verilator
  [yosys]=yosys
)

metaroce_install_missing() {
  local missing=()
  for cmd in "$@"; do
    command -v "$cmd" >/dev/null 2>&1 || missing+=("${METAROCE_PACKAGES[$cmd]}")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "installing: ${missing[*]}" >&2
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >&2
}
