#!/usr/bin/env bash
# Weak scaling of the replay, 1,024 to 65,536 GPUs, counted instead of timed. Each size runs once
# under Valgrind's callgrind (Debian package `valgrind`), which counts what bench_replay's wall_s
# times (replay_once: loading the cluster and model, building and simulating the iteration; not
# the bare reference loop that follows). Printed per size: instructions, first-level and
# last-level data cache misses in the simulated caches, an estimate of cycles from them, and per
# doubling the multiple of each. The counts are the same on every run, so a doubling's multiple
# does not swing with the other tenants of a shared machine as wall time does
# (tools/bench/scaling.sh). The estimate weighs a first-level miss at 10 cycles and a last-level
# miss at 200, the costs cachegrind's manual gives for a modern machine ("Cachegrind: a cache and
# branch-prediction profiler", overview); it leaves out what the simulation cannot see (the TLB,
# prefetching, branch prediction), so it checks the wall-time figures rather than replacing them.
# Usage: tools/bench/scaling_counts.sh [BENCH_REPLAY] [D1 [LL]]
#   defaults: build-rel/tools/bench/bench_replay; a 32 KiB 8-way first-level data cache and a
#   32 MiB 16-way last level with 64-byte lines (an AMD EPYC core and the L3 its VM reports);
#   cache geometries as cachegrind's --D1 and --LL take them (size,associativity,line).
set -euo pipefail
cd "$(dirname "$0")/../.."
bench=${1:-build-rel/tools/bench/bench_replay}
d1=${2:-32768,8,64}
ll=${3:-33554432,16,64}
sizes=(1024 2048 4096 8192 16384 32768 65536)  # bench_replay's scaling_cases, by name
[ -x "$bench" ] || { echo "scaling_counts.sh: $bench is not an executable bench_replay" >&2; exit 1; }
command -v valgrind > /dev/null || { echo "scaling_counts.sh: needs valgrind" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One line per size: size Ir D1_misses LL_misses (data reads and writes; instruction misses are
# left out: the code run is the same at every size).
for size in "${sizes[@]}"; do
  valgrind --tool=callgrind --cache-sim=yes --D1="$d1" --LL="$ll" \
    --toggle-collect='hetsim::bench::replay_once*' --callgrind-out-file="$work/$size.out" \
    "$bench" 1 scaling "$size-gpu" > /dev/null \
    2> "$work/$size.log" || { cat "$work/$size.log" >&2; exit 1; }
  awk -v s="$size" '
    /^events:/ { for (i = 2; i <= NF; i++) column[$i] = i }
    /^totals:/ { print s, $column["Ir"], $column["D1mr"] + $column["D1mw"],
                  $column["DLmr"] + $column["DLmw"] }' "$work/$size.out"
done | awk '
  { ir[NR] = $2; l1[NR] = $3; ll[NR] = $4; size[NR] = $1
    cycles[NR] = $2 + 10 * $3 + 200 * $4 }
  END {
    printf "%7s %15s %13s %12s %15s %7s %7s %7s %9s\n", "GPUs", "instructions", "L1_misses",
           "LL_misses", "est_cycles", "x_Ir", "x_L1", "x_LL", "x_cycles"
    for (k = 1; k <= NR; k++) {
      if (k == 1) {
        xi = xl1 = xll = xc = "-"
      } else {
        xi = sprintf("%.2f", ir[k] / ir[k - 1]); xl1 = sprintf("%.2f", l1[k] / l1[k - 1])
        xll = sprintf("%.2f", ll[k] / ll[k - 1]); xc = sprintf("%.2f", cycles[k] / cycles[k - 1])
      }
      printf "%7d %15.0f %13.0f %12.0f %15.0f %7s %7s %7s %9s\n", size[k], ir[k], l1[k], ll[k],
             cycles[k], xi, xl1, xll, xc
    }
    printf "1,024 -> %d GPUs: %.1fx estimated cycles, %.2f per doubling on average\n", size[NR],
           cycles[NR] / cycles[1], exp(log(cycles[NR] / cycles[1]) / (NR - 1))
  }'
