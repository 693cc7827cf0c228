#pragma once
// The iteration-level scheduler of one serving replica: which sequences compute how many tokens
// in the next iteration, and the KV-cache blocks they hold. Three policies:
//  - kVllm: vLLM's default scheduler (Kwon et al., SOSP'23) without chunked prefill: waiting
//    prompts are admitted whole, first come first served, as an iteration of prefills only while
//    any can be admitted (up to max_batched_tokens, max_num_seqs and the free blocks); otherwise
//    every running sequence decodes one token. A decode that needs a block when none is free
//    preempts the most recently admitted sequence, which frees its blocks and is recomputed later
//    (its prompt and the tokens it generated prefilled again).
//  - kSarathi: Sarathi-Serve's stall-free batching (Agrawal et al., OSDI'24): each iteration takes
//    every decode first, then fills a token budget (max_batched_tokens) with chunks of the
//    prefills in progress and of newly admitted prompts. Preemption as vLLM's.
//  - kOrca: Orca's iteration-level scheduling (Yu et al., OSDI'22): every iteration decodes all
//    running sequences and adds the whole prompts of newly admitted ones; a request is admitted
//    only when the blocks for its prompt and all its output tokens are free, so none is ever
//    preempted.
// When a running sequence can make no progress because the cache is full, the most recently
// admitted one is preempted, so a replica never stalls.
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "sim/serving/batch_cost.hpp"

namespace hetsim::serving {

enum class SchedulerKind { kVllm, kSarathi, kOrca };
const char* to_string(SchedulerKind kind);
// Throws InputError (command line, --scheduler) for an unknown name.
SchedulerKind scheduler_from_string(const std::string& text);

struct SchedulerLimits {
  int max_num_seqs = 256;         // sequences per iteration (vLLM's default)
  long max_batched_tokens = 8192;  // tokens per iteration; Sarathi's token budget
  int block_tokens = 16;          // tokens per KV-cache block
  long num_blocks = 0;            // KV-cache blocks of the replica
};

// Speculative decoding (Leviathan et al., ICML'23, arXiv:2211.17192; vLLM's draft-model
// proposer): each decode step of a sequence, a draft model proposes up to `draft_tokens` tokens,
// one autoregressive pass each, and the target verifies them with the sequence's last token in
// one pass. Each proposal is accepted with probability `acceptance_rate` while all before it
// were (the paper's i.i.d. alpha), so the accepted count is a geometric draw truncated at the
// proposals, and the step emits the accepted tokens plus the target's own next token: between 1
// and draft_tokens + 1, (1 - alpha^(k+1)) / (1 - alpha) in expectation (eq. 1). A sequence with
// r output tokens left proposes min(draft_tokens, r - 1), so it never overshoots its output.
// After a step whose proposals were all accepted, the draft's first pass of the next step reads
// two tokens, its last proposal (never fed back to it) and the target's token after it.
struct SpeculativeDecoding {
  int draft_tokens = 0;  // 0: off
  double acceptance_rate = 0;
  std::mt19937_64* rng = nullptr;  // the acceptance draws, shared by a run's schedulers
  bool enabled() const { return draft_tokens > 0; }
};

// Leviathan et al.'s eq. 1: tokens a step of k proposals emits in expectation at acceptance
// rate alpha, (1 - alpha^(k+1)) / (1 - alpha); k + 1 at alpha = 1.
double expected_tokens_per_step(double alpha, int k);

// What speculative decoding did on a scheduler's sequences.
struct SpeculationStats {
  long verifications = 0;  // sequence-steps that verified at least one proposal
  long proposed = 0;       // draft tokens proposed in them
  long accepted = 0;       // of which the target accepted
  long emitted = 0;        // output tokens those steps emitted (accepted + one each)
  double expected_emitted = 0;  // eq. 1 summed over those steps, at each step's proposals
  void add(const SpeculationStats& other);
};

// One sequence's share of an iteration.
struct StepEntry {
  int slot = 0;          // the sequence (ReplicaScheduler's slot)
  int request = 0;       // the request it serves
  long tokens = 0;       // tokens computed: a prefill chunk, 1 for a decode, 1 + proposals to verify
  bool prefill = false;
};

struct Step {
  std::vector<StepEntry> entries;
  IterationWork work;
  // Speculative decoding: the draft model's passes before the target's, in order. The first
  // also prefills the draft's cache with this step's prompt chunks; pass j proposes the (j+1)-th
  // token of every sequence proposing more than j.
  std::vector<IterationWork> draft_passes;
  bool empty() const { return entries.empty(); }
};

// What a finished iteration produced.
struct StepOutcome {
  std::vector<int> first_tokens;  // requests whose first output token came out
  std::vector<int> finished;      // requests whose last output token came out
};

class ReplicaScheduler {
 public:
  ReplicaScheduler(SchedulerKind kind, const SchedulerLimits& limits, const SpeculativeDecoding& speculation = {});

  // A request routed to this replica joins the waiting queue.
  void enqueue(int request, long prompt_tokens, long output_tokens);
  // A request prefilled elsewhere (disaggregated serving) whose KV cache has arrived: it holds its
  // prompt's keys and values and its first output token, and joins the running sequences, first
  // come first served, when the blocks for its prompt (Orca: for all its tokens) are free.
  void enqueue_prefilled(int request, long prompt_tokens, long output_tokens);
  // Plans the next iteration into `step`, allocating its blocks; false when nothing can run.
  bool plan(Step& step);
  // Applies an iteration planned by plan(): tokens computed and emitted, blocks of finished
  // sequences freed.
  void complete(const Step& step, StepOutcome& outcome);

  // The cache changes size (a re-split moved layers between stages): when the used blocks no
  // longer fit, the newest sequences are preempted until they do.
  void resize_cache(long num_blocks);

  long used_blocks() const { return limits_.num_blocks - free_blocks_; }
  long preemptions() const { return preemptions_; }
  const SpeculationStats& speculation_stats() const { return speculation_stats_; }
  // Requests routed here and not finished.
  int outstanding() const { return static_cast<int>(waiting_.size() + running_.size() + prefilled_.size()); }
  const SchedulerLimits& limits() const { return limits_; }

 private:
  struct Sequence {
    int request = 0;
    long prompt = 0;
    long output = 0;
    long cached = 0;     // tokens whose K and V are in the cache
    long generated = 0;  // output tokens emitted
    long target = 0;     // tokens the current prefill must cache: prompt + generated on admission
    long blocks = 0;
    bool in_prefill = true;
    // Speculative decoding: the target accepted every proposal of the last step, so the draft
    // never read its own last proposal; its next first pass reads that token and the last one.
    bool draft_behind = false;
  };
  void plan_vllm(Step& step);
  void plan_sarathi(Step& step);
  void plan_orca(Step& step);
  // Decodes of every running sequence past its prefill, growing blocks and preempting from the
  // back of the running list when none is free. Returns the tokens added.
  long add_decodes(Step& step, bool allocate);
  bool admit_front(long blocks);
  void admit_prefilled();
  int new_slot();
  // A fresh sequence of `request` in a free slot, waiting for its prompt; returns the slot.
  int new_sequence(int request, long prompt_tokens, long output_tokens);
  void preempt(std::size_t running_index);
  bool grow_to(Sequence& s, long tokens);
  // The tokens a decode of `s` computes: 1, or 1 + its proposals under speculative decoding.
  long decode_tokens(const Sequence& s) const;
  void add_decode_entry(Step& step, int slot, long tokens);
  // Speculative decoding: how many of `proposed` draft tokens the target accepts.
  long accepted_draws(long proposed);
  // Speculative decoding: the draft caches this step's prompt chunks in its first pass.
  void add_draft_prefills(Step& step) const;
  // Gives back the blocks of `s` beyond those its cached tokens fill (rejected proposals).
  void trim_blocks(Sequence& s);

  SchedulerKind kind_;
  SchedulerLimits limits_;
  SpeculativeDecoding speculation_;
  SpeculationStats speculation_stats_;
  long free_blocks_ = 0;
  long preemptions_ = 0;
  std::vector<Sequence> slots_;     // sequences by slot; slots are reused through free_slots_
  std::vector<int> free_slots_;
  std::deque<int> waiting_;         // slots, in admission order (preempted ones first)
  std::deque<int> prefilled_;       // slots whose KV cache arrived from a prefill replica
  std::vector<int> running_;        // slots, in admission order
};

}  // namespace hetsim::serving
