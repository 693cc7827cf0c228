#!/usr/bin/env bash
# Sets everything up and runs the shipped default what-if: Llama-3-8B on 4 DGX H100 nodes
# (tp 4 x pp 2 x dp 4, 1F1B), printing the report and writing a Perfetto trace.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
HETSIM_TARGETS=hetsim tools/build.sh build
build/tools/hetsim run --trace hetsim-default-trace.json
build/tools/hetsim validate hetsim-default-trace.json
