// Every schedule kind replays on a real cluster and model, with its own memory accounting:
// DualPipe's two parameter copies, PipeDream's stashed weight versions, Seq1F1B's smaller
// segments, and the iteration-time order the papers report.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "sim/training_run.hpp"
#include "tests/sim/shipped_inputs.hpp"

using namespace hetsim;

namespace {
RunResult run_kind(const std::string& kind, int vpp, int splits = 1, int tp = 4) {
  RunOptions o;
  o.plan.tp = tp;
  o.plan.pp = 4;
  o.plan.vpp = vpp;
  o.plan.global_batch_size = 32;
  o.plan.seq_length = 4096;
  o.schedule = kind;
  o.sequence_splits = splits;
  return simulate_training(test::shipped_cluster("dgx-h100-4node"), test::shipped_catalog(), test::shipped_model("llama-3-8b"), o);
}

double static_gib(const RunResult& r) { return r.memory.front().static_bytes / (1024.0 * 1024 * 1024); }
}  // namespace

TEST_CASE("every kind runs on a cluster and keeps the engine's invariants") {
  const std::map<std::string, int> chunks{{"gpipe", 1},    {"1f1b", 1},      {"interleaved", 2},
                                          {"bfs", 1},      {"zb-h1", 1},     {"zb-v", 2},
                                          {"dualpipe", 2}, {"dualpipev", 2}, {"pipedream", 1},
                                          {"pipedream-2bw", 1}, {"zb-h2", 1},   {"zb-auto", 1},
                                          {"v-half", 2},   {"v-min", 2}};
  for (const auto& [kind, v] : chunks) {
    const std::string kind_name = kind;
    INFO(kind_name);
    const RunResult r = run_kind(kind, v);
    CHECK(r.schedule == kind);
    CHECK(r.iteration_time_s > r.pipeline_time_s);
    CHECK(r.bubble_fraction > 0);
    CHECK(r.bubble_fraction < 0.5);
  }
  const RunResult seq = run_kind("seq1f1b", 1, 4);
  CHECK(seq.schedule == "seq1f1b");
}

TEST_CASE("per-kind memory: DualPipe two parameter copies, PipeDream stashed versions") {
  const RunResult one = run_kind("1f1b", 1);
  const RunResult dual = run_kind("dualpipe", 2);
  const RunResult dual_v = run_kind("dualpipev", 2);
  // DualPipe's rank holds two mirrored 1/p slices; DualPipeV two 1/(2p) slices (DeepSeek's table:
  // parameters 2x vs 1x). Ranks 1 and 2 hold no embedding or LM head, so compare GPU of rank 1.
  const auto rank1 = [](const RunResult& r) { return r.memory[4 * 4].static_bytes; };  // tp 4, dp 4
  CHECK(rank1(dual) == doctest::Approx(2 * rank1(one)).epsilon(1e-9));
  CHECK(rank1(dual_v) == doctest::Approx(rank1(one)).epsilon(1e-9));
  // PipeDream keeps min(p - r, m) weight versions on rank r, 2BW two: more static memory than 1F1B
  // on rank 0, and 2BW less than PipeDream there (p = 4 versions).
  const RunResult pipedream = run_kind("pipedream", 1);
  const RunResult two_bw = run_kind("pipedream-2bw", 1);
  CHECK(static_gib(pipedream) > static_gib(two_bw));
  CHECK(static_gib(two_bw) > static_gib(one));
}

TEST_CASE("Seq1F1B's segments shrink the peak activations and the bubble") {
  const RunResult one = run_kind("1f1b", 1);
  const RunResult seq = run_kind("seq1f1b", 1, 4);
  CHECK(seq.memory.front().activation_bytes < one.memory.front().activation_bytes);
  CHECK(seq.bubble_fraction < one.bubble_fraction);
}

TEST_CASE("zero-bubble and interleaved schedules beat 1F1B on the same plan") {
  const double one = run_kind("1f1b", 1).pipeline_time_s;
  // ZB-H1 only trims the bubble by a third; with TP its split W gives up hiding the input-gradient
  // all-reduces beside the wgrads, which here costs more than it saves: compared without TP.
  CHECK(run_kind("zb-h1", 1, 1, 1).pipeline_time_s < run_kind("1f1b", 1, 1, 1).pipeline_time_s);
  CHECK(run_kind("interleaved", 2).pipeline_time_s < one);
  CHECK(run_kind("zb-v", 2).pipeline_time_s < one);
  CHECK(run_kind("zb-h2", 1).pipeline_time_s < one);
  CHECK(run_kind("zb-auto", 1).pipeline_time_s < one);
}
