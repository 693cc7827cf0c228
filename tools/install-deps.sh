#!/usr/bin/env bash
# Installs what hetsim builds with, from Debian's packages (as root, or through sudo). Open MPI
# (libopenmpi-dev, and openmpi-bin for mpirun) lets `hetsim sweep` run across the ranks of an
# mpirun; the build leaves MPI out where it is missing.
set -euo pipefail
# clang and libclang-rt-14-dev (libFuzzer and clang's sanitizer runtimes) build the sanitized tree
# (tools/build_sanitized.sh): the sanitized tests and tools/fuzz.sh's targets.
packages=(build-essential cmake libboost-graph-dev nlohmann-json3-dev libspdlog-dev libfmt-dev
          libcli11-dev doctest-dev libjemalloc-dev libopenmpi-dev openmpi-bin
          clang libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
