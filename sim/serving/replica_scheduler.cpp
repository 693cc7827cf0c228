#include "sim/serving/replica_scheduler.hpp"

#include <algorithm>
#include <cmath>

#include "base/error.hpp"
#include "sim/serving/kv_cache.hpp"
#include "sim/serving/random_draws.hpp"

namespace hetsim::serving {

const char* to_string(SchedulerKind kind) {
  switch (kind) {
    case SchedulerKind::kVllm: return "vllm";
    case SchedulerKind::kSarathi: return "sarathi";
    case SchedulerKind::kOrca: return "orca";
  }
  return "?";
}

SchedulerKind scheduler_from_string(const std::string& text) {
  if (text == "vllm") return SchedulerKind::kVllm;
  if (text == "sarathi") return SchedulerKind::kSarathi;
  if (text == "orca") return SchedulerKind::kOrca;
  throw InputError("command line", "--scheduler", text, "one of vllm, sarathi, orca");
}

double expected_tokens_per_step(double alpha, int k) {
  if (alpha == 1) return k + 1;
  return (1 - std::pow(alpha, k + 1)) / (1 - alpha);
}

void SpeculationStats::add(const SpeculationStats& other) {
  verifications += other.verifications;
  proposed += other.proposed;
  accepted += other.accepted;
  emitted += other.emitted;
  expected_emitted += other.expected_emitted;
}

ReplicaScheduler::ReplicaScheduler(SchedulerKind kind, const SchedulerLimits& limits,
                                   const SpeculativeDecoding& speculation)
    : kind_(kind), limits_(limits), speculation_(speculation), free_blocks_(limits.num_blocks) {}

long ReplicaScheduler::decode_tokens(const Sequence& s) const {
  if (!speculation_.enabled()) return 1;
  return 1 + std::min<long>(speculation_.draft_tokens, s.output - s.generated - 1);
}

void ReplicaScheduler::add_decode_entry(Step& step, int slot, long tokens) {
  const Sequence& s = slots_[slot];
  step.entries.push_back({slot, s.request, tokens, false});
  if (tokens == 1) {
    step.work.add_decode(s.cached);
  } else {
    step.work.add_verification(tokens, s.cached);
  }
  // The draft proposes tokens - 1 tokens, its j-th pass reading the j tokens it proposed before.
  if (step.draft_passes.size() < static_cast<std::size_t>(tokens - 1)) step.draft_passes.resize(tokens - 1);
  for (long j = 0; j + 1 < tokens; ++j) {
    if (j == 0 && s.draft_behind) {
      step.draft_passes[0].add_prefill(2, s.cached - 1, true);
    } else {
      step.draft_passes[j].add_decode(s.cached + j);
    }
  }
}

long ReplicaScheduler::accepted_draws(long proposed) {
  long accepted = 0;
  // uniform_open01 < 1 always and > 0 always: alpha = 1 accepts every proposal, alpha = 0 none.
  while (accepted < proposed && uniform_open01(*speculation_.rng) < speculation_.acceptance_rate) ++accepted;
  return accepted;
}

void ReplicaScheduler::trim_blocks(Sequence& s) {
  // Orca reserved every output token's blocks on admission and keeps them.
  if (kind_ == SchedulerKind::kOrca) return;
  const long keep = blocks_for(s.cached, limits_.block_tokens);
  if (s.blocks <= keep) return;
  free_blocks_ += s.blocks - keep;
  s.blocks = keep;
}

int ReplicaScheduler::new_slot() {
  if (free_slots_.empty()) {
    slots_.emplace_back();
    return static_cast<int>(slots_.size() - 1);
  }
  const int slot = free_slots_.back();
  free_slots_.pop_back();
  return slot;
}

int ReplicaScheduler::new_sequence(int request, long prompt_tokens, long output_tokens) {
  const int slot = new_slot();
  Sequence& s = slots_[slot];
  s = Sequence{};
  s.request = request;
  s.prompt = prompt_tokens;
  s.output = output_tokens;
  s.target = prompt_tokens;
  return slot;
}

void ReplicaScheduler::enqueue(int request, long prompt_tokens, long output_tokens) {
  waiting_.push_back(new_sequence(request, prompt_tokens, output_tokens));
}

void ReplicaScheduler::enqueue_prefilled(int request, long prompt_tokens, long output_tokens) {
  const int slot = new_sequence(request, prompt_tokens, output_tokens);
  Sequence& s = slots_[slot];
  s.cached = prompt_tokens;
  s.generated = 1;
  s.in_prefill = false;
  prefilled_.push_back(slot);
}

void ReplicaScheduler::admit_prefilled() {
  while (!prefilled_.empty() && static_cast<int>(running_.size()) < limits_.max_num_seqs) {
    Sequence& s = slots_[prefilled_.front()];
    const long tokens = kind_ == SchedulerKind::kOrca ? s.prompt + s.output - 1 : s.cached;
    const long blocks = blocks_for(tokens, limits_.block_tokens);
    if (blocks > free_blocks_) return;
    free_blocks_ -= blocks;
    s.blocks = blocks;
    running_.push_back(prefilled_.front());
    prefilled_.pop_front();
  }
}

bool ReplicaScheduler::grow_to(Sequence& s, long tokens) {
  const long need = blocks_for(tokens, limits_.block_tokens) - s.blocks;
  if (need <= 0) return true;
  if (need > free_blocks_) return false;
  free_blocks_ -= need;
  s.blocks += need;
  return true;
}

void ReplicaScheduler::preempt(std::size_t running_index) {
  const int slot = running_[running_index];
  Sequence& s = slots_[slot];
  free_blocks_ += s.blocks;
  s.blocks = 0;
  s.cached = 0;
  s.in_prefill = true;
  s.draft_behind = false;
  // Recompute: the prompt and every token generated so far are prefilled again, which emits the
  // next token.
  s.target = s.prompt + s.generated;
  running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(running_index));
  waiting_.push_front(slot);
  ++preemptions_;
}

long ReplicaScheduler::add_decodes(Step& step, bool allocate) {
  long tokens = 0;
  for (std::size_t i = 0; i < running_.size(); ++i) {
    Sequence& s = slots_[running_[i]];
    if (s.in_prefill) continue;
    const long decode = decode_tokens(s);
    bool preempted_self = false;
    while (allocate && !grow_to(s, s.cached + decode)) {
      // The newest sequence gives its blocks back; when that is this one, it waits.
      const std::size_t victim = running_.size() - 1;
      preempt(victim);
      if (victim == i) {
        preempted_self = true;
        break;
      }
    }
    if (preempted_self) break;
    add_decode_entry(step, running_[i], decode);
    tokens += decode;
  }
  return tokens;
}

bool ReplicaScheduler::admit_front(long blocks) {
  if (blocks > free_blocks_) return false;
  const int slot = waiting_.front();
  waiting_.pop_front();
  free_blocks_ -= blocks;
  slots_[slot].blocks = blocks;
  running_.push_back(slot);
  return true;
}

void ReplicaScheduler::plan_vllm(Step& step) {
  long tokens = 0;
  while (!waiting_.empty() && static_cast<int>(running_.size()) < limits_.max_num_seqs) {
    const Sequence& s = slots_[waiting_.front()];
    if (tokens + s.target > limits_.max_batched_tokens) break;
    const int slot = waiting_.front();
    if (!admit_front(blocks_for(s.target, limits_.block_tokens))) break;
    step.entries.push_back({slot, slots_[slot].request, slots_[slot].target, true});
    step.work.add_prefill(slots_[slot].target, 0, true);
    tokens += slots_[slot].target;
  }
  if (step.empty()) add_decodes(step, true);
}

void ReplicaScheduler::plan_sarathi(Step& step) {
  long budget = limits_.max_batched_tokens - add_decodes(step, true);
  // Prefills in progress, in admission order, then new prompts, chunked to the budget.
  for (const int slot : running_) {
    Sequence& s = slots_[slot];
    if (!s.in_prefill || budget <= 0) continue;
    long chunk = std::min(s.target - s.cached, budget);
    // As much of the chunk as the free blocks hold.
    chunk = std::min(chunk, (s.blocks + free_blocks_) * limits_.block_tokens - s.cached);
    if (chunk <= 0) continue;
    grow_to(s, s.cached + chunk);
    step.entries.push_back({slot, slots_[slot].request, chunk, true});
    step.work.add_prefill(chunk, s.cached, s.cached + chunk == s.target);
    budget -= chunk;
  }
  while (budget > 0 && !waiting_.empty() && static_cast<int>(running_.size()) < limits_.max_num_seqs) {
    const int slot = waiting_.front();
    const long chunk = std::min(slots_[slot].target, budget);
    if (!admit_front(blocks_for(chunk, limits_.block_tokens))) break;
    step.entries.push_back({slot, slots_[slot].request, chunk, true});
    step.work.add_prefill(chunk, 0, chunk == slots_[slot].target);
    budget -= chunk;
  }
}

void ReplicaScheduler::plan_orca(Step& step) {
  // Blocks were reserved for every output token on admission: decodes never allocate.
  long tokens = add_decodes(step, false);
  while (!waiting_.empty() && static_cast<int>(running_.size()) < limits_.max_num_seqs) {
    const int slot = waiting_.front();
    const Sequence& s = slots_[slot];
    if (tokens + s.target > limits_.max_batched_tokens) break;
    if (!admit_front(blocks_for(s.prompt + s.output - 1, limits_.block_tokens))) break;
    step.entries.push_back({slot, s.request, s.target, true});
    step.work.add_prefill(s.target, 0, true);
    tokens += s.target;
  }
}

void ReplicaScheduler::add_draft_prefills(Step& step) const {
  if (!speculation_.enabled()) return;
  for (const StepEntry& e : step.entries) {
    if (!e.prefill) continue;
    if (step.draft_passes.empty()) step.draft_passes.emplace_back();
    // The draft caches the same prompt chunk; it samples nothing (the target emits the token).
    step.draft_passes.front().add_prefill(e.tokens, slots_[e.slot].cached, false);
  }
}

void ReplicaScheduler::resize_cache(long num_blocks) {
  free_blocks_ += num_blocks - limits_.num_blocks;
  limits_.num_blocks = num_blocks;
  while (free_blocks_ < 0 && !running_.empty()) preempt(running_.size() - 1);
}

bool ReplicaScheduler::plan(Step& step) {
  long preempted_before = preemptions_;
  for (;;) {
    step.entries.clear();
    step.work = IterationWork{};
    step.draft_passes.clear();
    admit_prefilled();
    switch (kind_) {
      case SchedulerKind::kVllm: plan_vllm(step); break;
      case SchedulerKind::kSarathi: plan_sarathi(step); break;
      case SchedulerKind::kOrca: plan_orca(step); break;
    }
    if (!step.empty()) {
      add_draft_prefills(step);
      return true;
    }
    if (!running_.empty()) {
      // Running sequences hold the whole cache and none can grow: the newest gives way.
      preempt(running_.size() - 1);
    } else if (preemptions_ == preempted_before || (waiting_.empty() && prefilled_.empty())) {
      return false;
    }
    // Everything running was preempted: plan once more, so the freed cache admits the first in line.
    preempted_before = preemptions_;
  }
}

void ReplicaScheduler::complete(const Step& step, StepOutcome& outcome) {
  outcome.first_tokens.clear();
  outcome.finished.clear();
  bool any_finished = false;
  for (const StepEntry& e : step.entries) {
    Sequence& s = slots_[e.slot];
    long emitted = 1;
    if (!e.prefill && e.tokens > 1) {
      // The last token and the accepted proposals enter the cache; the target's token after
      // them is emitted too.
      const long accepted = accepted_draws(e.tokens - 1);
      s.draft_behind = accepted == e.tokens - 1;
      emitted = accepted + 1;
      s.cached += emitted;
      trim_blocks(s);
      speculation_stats_.add({1, e.tokens - 1, accepted, emitted,
                              expected_tokens_per_step(speculation_.acceptance_rate, static_cast<int>(e.tokens - 1))});
    } else {
      s.cached += e.tokens;
    }
    if (e.prefill) {
      if (s.cached < s.target) continue;
      s.in_prefill = false;
    }
    s.generated += emitted;
    if (s.generated == 1) outcome.first_tokens.push_back(s.request);
    if (s.generated == s.output) {
      outcome.finished.push_back(s.request);
      free_blocks_ += s.blocks;
      s.blocks = 0;
      s.output = -1;  // marks the slot for removal below
      any_finished = true;
    }
  }
  if (!any_finished) return;
  std::erase_if(running_, [&](int slot) {
    if (slots_[slot].output != -1) return false;
    free_slots_.push_back(slot);
    return true;
  });
}

}  // namespace hetsim::serving
