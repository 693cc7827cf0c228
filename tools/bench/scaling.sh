#!/usr/bin/env bash
# Weak scaling of the replay, 1,024 to 65,536 GPUs, measured so that a shared machine's swings
# do not decide the answer: each size runs in a process of its own (as a user's `hetsim run`
# does, with nothing left in the allocator by a smaller case), the sizes one after the other,
# ROUNDS times over. Prints, per size, the median wall time and event-loop time of the rounds,
# events/s and peak RSS, and per doubling three multiples: the ratio of the medians; the median
# of each round's own ratio to the size before it (taken minutes apart from other rounds, those
# pairs share the machine's state of the moment); and the ratio of the fastest rounds. The work
# is deterministic and other tenants can only add time to it, so the fastest round is the one
# least disturbed (at the small sizes, where a round takes milliseconds, it still swings).
# Usage: tools/bench/scaling.sh [BENCH_REPLAY] [ROUNDS] [REPEATS]
#   defaults: build-rel/tools/bench/bench_replay, 9 rounds, 3 repeats per process (bench_replay's
#   own median).
set -euo pipefail
cd "$(dirname "$0")/../.."
bench=${1:-build-rel/tools/bench/bench_replay}
rounds=${2:-9}
repeats=${3:-3}
sizes=(1024 2048 4096 8192 16384 32768 65536)  # bench_replay's scaling_cases, by name
[ -x "$bench" ] || { echo "scaling.sh: $bench is not an executable bench_replay" >&2; exit 1; }

# One line per (round, size): round size events wall_s loop_s peak_rss_mib
for round in $(seq "$rounds"); do
  for size in "${sizes[@]}"; do
    "$bench" "$repeats" scaling "$size-gpu" |
      awk -v r="$round" -v s="$size" '$1 == s "-gpu" {print r, s, $4, $5, $10, $7}'
  done
done | sort -k2,2n -k1,1n | awk -v rounds="$rounds" "$(cat "tools/bench/median.awk")"'
  { events[$2] = $3; wall[$2, $1] = $4; loop[$2, $1] = $5; rss[$2] = $6
    if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 } }
  END {
    printf "%7s %10s %9s %9s %13s %9s %11s %11s %11s\n", "GPUs", "events", "wall_s", "loop_s",
           "events_per_s", "rss_mib", "x_medians", "x_paired", "x_fastest"
    for (k = 1; k <= n; k++) {
      s = order[k]
      fastest[s] = wall[s, 1]
      for (r = 1; r <= rounds; r++) {
        w[r] = wall[s, r]; l[r] = loop[s, r]
        if (w[r] < fastest[s]) fastest[s] = w[r]
      }
      mw = median(w, rounds); ml = median(l, rounds)
      xm = "-"; xp = "-"; xf = "-"
      if (k > 1) {
        p = order[k - 1]
        for (r = 1; r <= rounds; r++) q[r] = wall[s, r] / wall[p, r]
        xm = sprintf("%.2f", mw / previous); xp = sprintf("%.2f", median(q, rounds))
        xf = sprintf("%.2f", fastest[s] / fastest[p])
      }
      printf "%7d %10d %9.3f %9.3f %13.0f %9.1f %11s %11s %11s\n", s, events[s], mw, ml,
             events[s] / mw, rss[s], xm, xp, xf
      previous = mw
      if (k == 1) first = mw
    }
    printf "1,024 -> %d GPUs: %.1fx wall, %.2f per doubling on average\n", order[n],
           previous / first, exp(log(previous / first) / (n - 1))
  }'
