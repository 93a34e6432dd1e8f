#!/usr/bin/env bash
# Installs the Debian packages rdmasim needs (only those missing) and configures
# a build in ./build. Safe to run again. ibverbs-utils and perftest are the
# programs `programs:` runs (docs/programs.md).
set -euo pipefail
packages=(cmake g++ python3 ninja-build ccache pkg-config libyaml-cpp-dev libpcap-dev
          libboost-graph-dev doctest-dev libibverbs-dev nlohmann-json3-dev
          libcli11-dev libfmt-dev tshark python3-yaml python3-matplotlib chromium clang-format
          openmpi-bin libopenmpi-dev libmetis-dev ibverbs-utils perftest
          libns3-dev time)  # ns-3 and /usr/bin/time: bench/ns3_compare.py, peak memory in tests
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  # tshark asks whether non-root users may capture; answer no without a prompt.
  echo "wireshark-common wireshark-common/install-setuid boolean false" | $sudo debconf-set-selections
  $sudo apt-get install -y -q "${missing[@]}"
fi
