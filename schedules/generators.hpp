#pragma once
// Timetable generators. Each returns a timetable that passes validate(), or throws PlanError
// naming the constraint it breaks and a value that would satisfy it.
#include <string>
#include <vector>

#include "schedules/timetable.hpp"

namespace hetsim {

// GPipe (Huang et al. 2019): all forwards, then all backwards in reverse microbatch order.
Timetable make_gpipe(int ranks, int microbatches);

// 1F1B / PipeDream-Flush (Narayanan et al. 2021), in Megatron-LM's non-interleaved order:
// min(p - rank - 1, m) warm-up forwards, then one-forward-one-backward, then cool-down backwards.
Timetable make_1f1b(int ranks, int microbatches);

// Interleaved 1F1B (Narayanan et al. 2021) in Megatron-LM's order, v >= 2 chunks per rank placed
// looped (stage = chunk * p + rank). group_size is Megatron's microbatch_group_size_per_vp_stage
// (0 means p); it must lie in [p, m] and m mod g must be 0 or >= p, as Megatron-LM requires.
Timetable make_interleaved(int ranks, int microbatches, int chunks_per_rank, int group_size = 0);

// What Megatron-LM's interleaved schedule waits for when it does not overlap its p2p
// communication: each steady-state round (an F, then a B) ends with one
// send_forward_backward_recv_forward_backward, so the forward's output leaves only after the
// backward (Timetable::late_sends), and the receives of the next F and the next B are posted
// and waited for together before that F (Timetable::early_receives); the last warm-up forward's
// call already receives the first backward's gradient. Adds those links to a timetable
// make_interleaved built with the same group size.
void add_megatron_interleaved_p2p_links(Timetable& t, int group_size = 0);

// Looped breadth-first (Lamy-Poirier 2023): GPipe's order over the looped placement, chunk by
// chunk. With one chunk it is GPipe.
Timetable make_looped_bfs(int ranks, int microbatches, int chunks_per_rank);

// ZB-H1 (Qi et al., ICLR 2024): 1F1B's memory with the weight-gradient ops deferred into the
// bubbles; split_backward is true.
Timetable make_zb_h1(int ranks, int microbatches);

// ZB-H2 (Qi et al., ICLR 2024): 2(p - rank) - 1 warm-up forwards and W's deferred to the tail,
// zero bubble over each rank's span for m >= 2p with t_F = t_B = t_W; up to 2p - 1 microbatches
// of activations per rank; split_backward is true.
Timetable make_zb_h2(int ranks, int microbatches);

// Seq1F1B (Sun et al., NAACL 2025): 1F1B over sequence segments; each microbatch is cut into
// `splits` segments, which become the timetable's microbatches (sequence_splits = splits).
Timetable make_seq1f1b(int ranks, int microbatches, int splits);

// PipeDream (Narayanan et al., SOSP 2019) and PipeDream-2BW (Narayanan et al., ICML 2021): the
// 1F1B order of one iteration's m microbatches without a flush, with the parameter versions
// each rank keeps: p - r (one per in-flight microbatch) for PipeDream, 2 for 2BW.
Timetable make_pipedream(int ranks, int microbatches);
Timetable make_pipedream_2bw(int ranks, int microbatches);

// ZB-V (Qi et al. 2024, Sec. 6) in PyTorch's ScheduleZBVZeroBubble order: two chunks per rank
// in a V (stage r and 2p-1-r), split backward, 1F1B's peak activations.
Timetable make_zb_v(int ranks, int microbatches);

// V-Half and V-Min (Qi et al. 2024, "Pipeline Parallelism with Controllable Memory"): the V
// placement of ZB-V with building blocks whose lifespan sets the memory: peak (p+2)//2 (V-Half)
// or (p+4)//3 (V-Min) microbatches of one stage, against 1F1B's p; split_backward is true.
Timetable make_v_half(int ranks, int microbatches);
Timetable make_v_min(int ranks, int microbatches);

// DualPipe (DeepSeek-V3) in the order of DeepSeek's step(): two directions over p ranks, paths
// 0..p-1 and p..2p-1, half the microbatches on each. Needs even p and even m >= 2p.
Timetable make_dualpipe(int ranks, int microbatches);

// DualPipeV (DeepSeek's cut-in-half DualPipe) in the order of its step(): the V placement, one
// path through 2p stages. Needs m >= 2p.
Timetable make_dualpipe_v(int ranks, int microbatches);

// Names make_timetable accepts, in the order they are listed in messages.
const std::vector<std::string>& timetable_kinds();

// The generator for `kind` (one of timetable_kinds()); `chunks` is v, which must be 1 for the
// kinds without chunks. Unknown names throw PlanError listing the known ones.
Timetable make_timetable(const std::string& kind, int ranks, int microbatches, int chunks);

// The most ops a generated timetable may hold (three per rank, microbatch and chunk or sequence
// segment), and the bound `run` puts on one simulated iteration's op runs (sim/replay_size.hpp,
// where its memory and time are measured), so that `schedule --pp 10000 --mb 10000` is refused
// at once rather than after minutes and gigabytes.
inline constexpr double kMaxTimetableOps = 2e7;
// Throws PlanError when `ranks` x `microbatches` x `chunks` (or sequence segments) would make
// more than kMaxTimetableOps ops. make_timetable checks it; callers of a generator directly do.
void check_timetable_size(const std::string& kind, int ranks, int microbatches, int chunks);

}  // namespace hetsim
