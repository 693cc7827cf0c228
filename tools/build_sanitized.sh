#!/usr/bin/env bash
# Builds the sanitized tree into build-san/: clang, AddressSanitizer + UndefinedBehaviorSanitizer
# (float-cast-overflow included in clang's `undefined`), libFuzzer's coverage instrumentation and
# the fuzz targets, at -O0 with line tables (-g1) for the shortest compile that still gives every
# report its file and line. One build serves both the sanitized test
# suite (tools/test.sh) and fuzzing (tools/fuzz.sh), so the tree is compiled twice in all, not
# three times. HETSIM_TARGETS (space-separated) limits what is built.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh build-san -DCMAKE_CXX_COMPILER=clang++ -DHETSIM_SANITIZE=ON -DHETSIM_FUZZ=ON \
  -DHETSIM_CUDA=OFF -DHETSIM_BENCHMARKS=OFF -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1
