#!/usr/bin/env bash
# Configures and builds hetsim into DIR (default build/) with the extra CMake arguments given;
# HETSIM_TARGETS (space-separated) limits what is built. The CUDA calibration suite builds when
# nvcc is found (on PATH or in /usr/local/cuda).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
if [ -z "${CUDACXX:-}" ] && ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
targets=()
for t in ${HETSIM_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$dir" -j "$(nproc)" "${targets[@]}"
