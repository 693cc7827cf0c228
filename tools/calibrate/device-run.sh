#!/usr/bin/env bash
# Builds hetsim with the CUDA suite, runs `hetsim calibrate --quick`, prints the roofline report
# and times a real PyTorch training step beside hetsim's prediction. Everything goes under one
# folder: $OUT, or the first argument, or ./calibration-out. Meant for one H200 in under 8 minutes.
#   tools/calibrate/device-run.sh [OUTDIR] [--dry-run]
set -euo pipefail

out="${OUT:-}"
dry_run=0
for arg in "$@"; do
  case "$arg" in
    --dry-run) dry_run=1 ;;
    *) out="$arg" ;;
  esac
done
out="${out:-calibration-out}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${repo}/build-calibrate"
jobs="$(nproc 2>/dev/null || echo 4)"

step() {
  echo "+ $*"
  if [[ $dry_run -eq 0 ]]; then "$@"; fi
}

mkdir -p "$out"
log="$out/device-run.log"
[[ $dry_run -eq 1 ]] && log=/dev/null
{
  echo "device-run: repo ${repo}, output ${out}"
  step nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv
  step cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release -DHETSIM_CUDA=ON \
    -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc -DCMAKE_CUDA_ARCHITECTURES=90
  step cmake --build "$build" -j "$jobs" --target hetsim hetsim-calibrate-suite
  # The suite alone first, so its failure is visible even if the CLI does not build.
  step timeout 240 "$build/tools/hetsim-calibrate-suite" --quick --out "$out/profile.json"
  step "$build/tools/hetsim" calibrate --report "$out/profile.json"
  step timeout 180 python3 "$repo/tools/calibrate/pytorch_step.py" \
    --config "$repo/models/configs/llama-3.2-1b.json" --hetsim "$build/tools/hetsim" \
    --cluster "$repo/topologies/clusters/single-h200.json" \
    --profile "$out/profile.json" --json-out "$out/pytorch_step.json"
} 2>&1 | tee "$log"
