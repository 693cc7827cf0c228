#!/usr/bin/env bash
# Fuzzes every input parser: builds the libFuzzer targets of tests/fuzz with clang, AddressSanitizer
# and UndefinedBehaviorSanitizer into build-san/ (tools/build_sanitized.sh), seeds each from the shipped files, runs each for
# SECONDS (default 60), PARALLEL (default 1) at a time, and prints its executions, peak memory
# and corpus size. Usage: tools/fuzz.sh [SECONDS [PARALLEL [TARGET...]]] (TARGETs: only those).
# Fails when any target finds a crash, a sanitizer report, an exception other than an input
# error, an input slower than 10 s or one that needs more than 100 MiB in one allocation or
# 256 MiB in all; the input is kept in build-san/findings/TARGET/ (replay it:
# build-san/tests/fuzz/TARGET FILE). tools/fuzz_memory.sh then bounds what refused inputs cost
# without the sanitizers' overhead.
# Needs clang and libclang-rt-14-dev (tools/install-deps.sh), and a hetsim binary ($HETSIM, else
# build/tools/hetsim, built if absent) for the seeds that the shipped files do not hold as such
# (timetables, a trace, profiles).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
parallel=${2:-1}
dir=build-san
targets=(cluster model_config gpu_file timetable trace profile column_mapping expression csv sweep_spec)
run_targets=("${targets[@]}")
if [ $# -gt 2 ]; then run_targets=("${@:3}"); fi

fuzz_binaries=()
for t in "${targets[@]}"; do fuzz_binaries+=("fuzz_$t"); done
HETSIM_TARGETS="${fuzz_binaries[*]}" tools/build_sanitized.sh
hetsim=${HETSIM:-build/tools/hetsim}
if [ ! -x "$hetsim" ]; then
  HETSIM_TARGETS=hetsim tools/build.sh build
  hetsim=build/tools/hetsim
fi

# Seeds, gathered afresh on every run into the corpus directories, which also keep what earlier
# runs found.
corpus=$dir/corpus
generated=$dir/generated-seeds
rm -rf "$generated"
mkdir -p "$generated"
for t in "${targets[@]}"; do mkdir -p "$corpus/$t"; done
cp topologies/clusters/*.json tests/data/clusters/*.json tests/cli/clusters/*.json \
   tests/cli/bad_inputs/cluster_*.json "$corpus/cluster/"
cp models/configs/*.json "$corpus/model_config/"
cp tools/sweep/examples/*.json tools/bench/sweep-*.json "$corpus/sweep_spec/"
cp models/gpus/*.json "$corpus/gpu_file/"
cp tests/cli/bad_inputs/deadlock_timetable.json "$corpus/timetable/"
while read -r name options; do
  # shellcheck disable=SC2086  # the options are words
  "$hetsim" schedule $options --export "$corpus/timetable/$name.json" >/dev/null
done <<'EOF'
gpipe --kind gpipe --pp 4 --mb 8
1f1b --kind 1f1b --pp 4 --mb 8
interleaved --kind interleaved --pp 4 --mb 8 --vpp 2
zb-h1 --kind zb-h1 --pp 4 --mb 8 --w 1
zb-v --kind zb-v --pp 4 --mb 8 --vpp 2 --w 1
dualpipe --kind dualpipe --pp 4 --mb 8 --vpp 2 --w 1
seq1f1b --kind seq1f1b --pp 4 --mb 8 --seq-splits 2
pipedream-2bw --kind pipedream-2bw --pp 4 --mb 8
EOF
"$hetsim" run --cluster topologies/clusters/dgx-a100-1node.json --model models/configs/llama-3.2-1b.json \
  --tp 4 --pp 2 --gbs 2 --seq-length 512 --trace "$corpus/trace/llama-3.2-1b-tp4-pp2.json" >/dev/null

# CSV seeds are each file's header and first rows: enough for every column, small enough to mutate.
compute_csv=tests/data/vidur/compute/a100/meta-llama/Meta-Llama-3-8B/mlp.csv
all_reduce_csv=tests/data/vidur/network/a100_dgx/all_reduce.csv
send_recv_csv=tests/data/vidur/network/a100_dgx/send_recv.csv
head -n 40 "$compute_csv" > "$generated/mlp.csv"
head -n 40 "$all_reduce_csv" > "$generated/all_reduce.csv"
head -n 5 "$send_recv_csv" > "$generated/send_recv.csv"
cp "$generated"/*.csv "$corpus/csv/"
"$hetsim" calibrate --refit "$generated/mlp.csv" --mapping models/calibration/mappings/vidur_compute.json \
  --out "$corpus/profile/vidur-a100-compute.json" >/dev/null
"$hetsim" calibrate --refit "$generated/all_reduce.csv" \
  --mapping models/calibration/mappings/vidur_all_reduce.json \
  --out "$corpus/profile/vidur-a100-all-reduce.json" >/dev/null
# column_mapping: the mapping, a NUL byte, the CSV it reads. expression: one expression of the
# mapping on the first line, the CSV after it.
while read -r mapping csv; do
  name=$(basename "$mapping" .json)
  { cat "models/calibration/mappings/$mapping"; printf '\0'; cat "$generated/$csv"; } \
    > "$corpus/column_mapping/$name"
  grep -oE '"(time|m|n|k|batch|heads|seq|head_dim|causal|bytes|ranks|where|size|num_tokens|tp)": "[^"$][^"]*"' \
      "models/calibration/mappings/$mapping" | sed -E 's/^"[a-z_]+": "(.*)"$/\1/' | sort -u |
    while IFS= read -r expression; do
      { printf '%s\n' "$expression"; cat "$generated/$csv"; } \
        > "$corpus/expression/$name-$(printf '%s' "$expression" | cksum | cut -d' ' -f1)"
    done
done <<'EOF'
vidur_compute.json mlp.csv
vidur_all_reduce.json all_reduce.csv
vidur_send_recv.json send_recv.csv
EOF

# ASan keeps freed memory in quarantine (256 MiB by default), which would count against the RSS
# limit without being the input's doing.
export ASAN_OPTIONS=quarantine_size_mb=16:detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# One target's run; its outcome line goes to $dir/logs/TARGET.result for the table below.
fuzz_target() {
  local t=$1 log=$dir/logs/$1.log result=ok executions rss
  mkdir -p "$dir/findings/$t"
  "$dir/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -malloc_limit_mb=100 -rss_limit_mb=256 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$dir/findings/$t/" "$corpus/$t" >"$log" 2>&1 ||
    result="FINDING (see $log)"
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log")
  printf '%-16s %8s %12s %7s MB %8s %s\n' "$t" "$seconds" "${executions:-?}" "${rss:-?}" \
    "$(find "$corpus/$t" -type f | wc -l)" "$result" >"$dir/logs/$t.result"
}
mkdir -p "$dir/logs"
running=0
for t in "${run_targets[@]}"; do
  rm -f "$dir/logs/$t.result"
  fuzz_target "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$parallel" ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait
failed=()
printf '%-16s %8s %12s %10s %8s %s\n' target seconds executions peak_RSS corpus result
for t in "${run_targets[@]}"; do
  cat "$dir/logs/$t.result"
  grep -q ' ok$' "$dir/logs/$t.result" || failed+=("$t")
done
if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzzing found inputs that break: ${failed[*]} (inputs in $dir/findings/)" >&2
  exit 1
fi
