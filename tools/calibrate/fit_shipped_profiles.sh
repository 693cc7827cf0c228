#!/usr/bin/env bash
# Regenerates the shipped profiles (models/profiles/, README.md there) from the measurements
# recorded in tests/data/vidur, offline. Run from anywhere; the profiles go to DIR (default
# models/profiles). HETSIM names the hetsim binary (default build/tools/hetsim, built if missing).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-models/profiles}
hetsim=${HETSIM:-build/tools/hetsim}
if [ ! -x "$hetsim" ]; then HETSIM_TARGETS=hetsim tools/build.sh build; fi
mkdir -p "$out"
data=tests/data/vidur
mappings=models/calibration/mappings

# One A100 80GB SXM: forward ops of Llama-2-7B and Llama-3-8B layers; NCCL on a DGX A100. Peaks
# for `calibrate --report`, in the dtype measured: NVIDIA A100 Tensor Core GPU datasheet, 80GB SXM
# column: FP16 Tensor Core 312 TFLOPS dense, HBM2e 2,039 GB/s (as models/gpus/a100-80gb.json).
"$hetsim" calibrate --gpu-name "NVIDIA A100-SXM4-80GB" --out "$out/a100-80gb.json" \
  --peak-tflops 312 --peak-dtype fp16 --hbm-gbps 2039 \
  --peaks-source "NVIDIA A100 Tensor Core GPU datasheet, 80GB SXM: FP16 Tensor Core 312 TFLOPS dense, 2,039 GB/s" \
  --refit "$data/compute/a100/meta-llama/Llama-2-7b-hf/mlp.csv" --mapping "$mappings/vidur_compute.json" \
  --refit "$data/compute/a100/meta-llama/Meta-Llama-3-8B/mlp.csv" --mapping "$mappings/vidur_compute.json" \
  --refit "$data/network/a100_dgx/all_reduce.csv" --mapping "$mappings/vidur_all_reduce.json" \
  --refit "$data/network/a100_dgx/send_recv.csv" --mapping "$mappings/vidur_send_recv.json"

# One A40: forward ops of Llama-2-7B layers. Peaks: NVIDIA A40 datasheet, FP16 Tensor Core 149.7
# TFLOPS dense, GDDR6 696 GB/s (as models/gpus/a40.json).
"$hetsim" calibrate --gpu-name "NVIDIA A40" --out "$out/a40.json" \
  --peak-tflops 149.7 --peak-dtype fp16 --hbm-gbps 696 \
  --peaks-source "NVIDIA A40 datasheet: FP16 Tensor Core 149.7 TFLOPS dense, 696 GB/s" \
  --refit "$data/compute/a40/meta-llama/Llama-2-7b-hf/mlp.csv" --mapping "$mappings/vidur_compute.json"
