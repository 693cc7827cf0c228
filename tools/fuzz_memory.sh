#!/usr/bin/env bash
# Bounds the memory a refused input costs: replays every input fuzzing kept (build-san/corpus/
# and build-san/findings/ of tools/fuzz.sh) through the same fuzz targets built in build/ without
# libFuzzer or sanitizers (tests/fuzz/fuzz_replay_main.cpp runs each input in a child process and
# reads its peak resident memory from wait4), and prints per target the inputs refused and
# accepted and the largest peak of each, and the most CPU time a refused input took. Fails when a
# refused input peaks above LIMIT_MIB (default 100) or takes more than LIMIT_S seconds of CPU
# (default 1: a bad input is refused at once), or a replay ends other than by returning.
# Usage: tools/fuzz_memory.sh [LIMIT_MIB [LIMIT_S]]   (after tools/fuzz.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
limit_mib=${1:-100}
limit_s=${2:-1}
fuzz_dir=build-san
out=$fuzz_dir/memory
if [ ! -d "$fuzz_dir/corpus" ]; then
  echo "no $fuzz_dir/corpus: run tools/fuzz.sh first" >&2
  exit 1
fi
targets=()
for d in "$fuzz_dir"/corpus/*/; do targets+=("$(basename "$d")"); done
binaries=()
for t in "${targets[@]}"; do binaries+=("fuzz_$t"); done
HETSIM_TARGETS="${binaries[*]}" tools/build.sh build >/dev/null
mkdir -p "$out"

failed=()
printf '%-16s %8s %8s %14s %14s %10s %s\n' target refused accepted refused_peak accepted_peak refused_cpu result
for t in "${targets[@]}"; do
  inputs=("$fuzz_dir/corpus/$t")
  [ -d "$fuzz_dir/findings/$t" ] && inputs+=("$fuzz_dir/findings/$t")
  result=ok
  # One line per input: refused|accepted|broken, peak KiB, CPU seconds, file.
  build/tests/fuzz/fuzz_$t "${inputs[@]}" >"$out/$t.txt" || result="BROKEN (see $out/$t.txt)"
  read -r refused accepted refused_kib accepted_kib worst refused_s slowest < <(awk '
    $1 == "refused" { n_r++; if ($2 > max_r) { max_r = $2; worst = $4 } if ($3 > max_s) { max_s = $3; slowest = $4 } }
    $1 == "accepted" { n_a++; if ($2 > max_a) max_a = $2 }
    END { printf "%d %d %d %d %s %.3f %s\n", n_r, n_a, max_r, max_a, (worst == "" ? "-" : worst), max_s,
                 (slowest == "" ? "-" : slowest) }' "$out/$t.txt")
  if [ "$refused_kib" -gt $((limit_mib * 1024)) ]; then
    result="OVER ${limit_mib} MiB: $worst"
  elif awk -v s="$refused_s" -v l="$limit_s" 'BEGIN { exit !(s > l) }'; then
    result="OVER ${limit_s} s: $slowest"
  fi
  [ "$result" = ok ] || failed+=("$t")
  printf '%-16s %8d %8d %10.1f MiB %10.1f MiB %8.3f s %s\n' "$t" "$refused" "$accepted" \
    "$(awk -v k="$refused_kib" 'BEGIN { print k / 1024 }')" \
    "$(awk -v k="$accepted_kib" 'BEGIN { print k / 1024 }')" "$refused_s" "$result"
done
if [ ${#failed[@]} -ne 0 ]; then
  echo "refused inputs over ${limit_mib} MiB or ${limit_s} s, or broken replays: ${failed[*]} (lists in $out/)" >&2
  exit 1
fi
