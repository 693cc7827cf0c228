#!/usr/bin/env bash
# Compares two bench_replay binaries (a change and its base) on the scaling cases, so that a shared
# machine's drift between fast and slow spells falls on both alike: each round runs every size in
# a process of its own, with one binary and then the other, the order swapped every round (ABBA).
# Prints per size the median wall and event-loop time of each binary, its peak RSS, the median of
# the rounds' own ratios (B over A, taken seconds apart) and how many rounds B was the faster.
# Usage: tools/bench/ab.sh BENCH_A BENCH_B ROUNDS SIZE... (sizes as in scaling.sh: 16384 65536)
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: $0 BENCH_A BENCH_B ROUNDS SIZE..." >&2; exit 1; }
a=$1 b=$2 rounds=$3
shift 3
for bench in "$a" "$b"; do
  [ -x "$bench" ] || { echo "ab.sh: $bench is not an executable bench_replay" >&2; exit 1; }
done

# One line per (round, binary, size): round side size wall_s loop_s peak_rss_mib
for round in $(seq "$rounds"); do
  if [ $((round % 2)) -eq 1 ]; then order="A B"; else order="B A"; fi
  for side in $order; do
    bench=$a
    [ "$side" = B ] && bench=$b
    for size in "$@"; do
      "$bench" 3 scaling "$size-gpu" |
        awk -v r="$round" -v side="$side" -v s="$size" '$1 == s "-gpu" {print r, side, s, $5, $10, $7}'
    done
  done
done | awk -v rounds="$rounds" "$(cat "$(dirname "$0")/median.awk")"'
  { wall[$3, $2, $1] = $4; loop[$3, $2, $1] = $5
    if ($6 > rss[$3, $2]) rss[$3, $2] = $6
    if (!($3 in seen)) { seen[$3] = 1; order[++n] = $3 } }
  END {
    printf "%7s %9s %9s %9s %9s %10s %10s %9s %7s\n", "GPUs", "wall_A", "wall_B", "loop_A",
           "loop_B", "rss_A_mib", "rss_B_mib", "B/A", "B_won"
    for (k = 1; k <= n; k++) {
      s = order[k]; won = 0
      for (r = 1; r <= rounds; r++) {
        wa[r] = wall[s, "A", r]; wb[r] = wall[s, "B", r]
        la[r] = loop[s, "A", r]; lb[r] = loop[s, "B", r]
        q[r] = wb[r] / wa[r]
        if (wb[r] < wa[r]) won++
      }
      printf "%7d %9.3f %9.3f %9.3f %9.3f %10.1f %10.1f %9.3f %4d/%d\n", s, median(wa, rounds),
             median(wb, rounds), median(la, rounds), median(lb, rounds), rss[s, "A"], rss[s, "B"],
             median(q, rounds), won, rounds
    }
  }'
