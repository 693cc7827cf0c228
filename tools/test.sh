#!/usr/bin/env bash
# Sets everything up and runs the whole test suite: a normal build, then the same tests under
# AddressSanitizer + UndefinedBehaviorSanitizer, then every parser's fuzz target for 10 s. Fails
# when any test fails or fuzzing finds anything.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
tools/build.sh build
ctest --test-dir build --output-on-failure -j "$(nproc)"
tools/build.sh build-asan -DHETSIM_SANITIZE=ON -DHETSIM_CUDA=OFF -DHETSIM_BENCHMARKS=OFF -DCMAKE_BUILD_TYPE=Debug
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j "$(nproc)"
tools/fuzz.sh 10
