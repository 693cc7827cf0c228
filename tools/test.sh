#!/usr/bin/env bash
# Sets everything up and runs the whole test suite: a normal build, then the same tests under
# AddressSanitizer + UndefinedBehaviorSanitizer (the clang build that also holds the fuzz
# targets), then every parser's fuzz target for 10 s, as many at a time as there are cores. Fails when any test fails or fuzzing finds
# anything. BENCHMARKS.md says how long each part takes.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
tools/build.sh build
ctest --test-dir build --output-on-failure -j "$(nproc)"
tools/build_sanitized.sh
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-san --output-on-failure -j "$(nproc)"
tools/fuzz.sh 10 "$(nproc)"
