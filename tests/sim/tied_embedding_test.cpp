// Megatron-LM all-reduces the main gradients of tied word embeddings between the pipeline rank
// holding the input embedding and the one holding the LM head, after both have reduced their
// data-parallel gradients and before either steps its optimizer (finalize_model_grads,
// _allreduce_word_embedding_grads). On two GPUs in two nodes joined by one NIC each, that
// all-reduce of S = vocab x hidden x 4 B (fp32 main grads) is a 2-GPU ring: S/B + 2L.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "sim/training_run.hpp"
#include "tests/sim/shipped_inputs.hpp"

using namespace hetsim;

namespace {

constexpr double kNicBytesPerS = 100e9 / 8;  // the test cluster's 100 Gbit/s NIC
constexpr double kNicLatencyS = 24e-6;

// Two single-GPU H100 nodes: a pipeline of two ranks whose only route crosses the NICs.
const Cluster& two_nodes() {
  static const Cluster c = [] {
    const std::string path = "/tmp/hetsim_sim_test_two_single_gpu_nodes.json";
    std::ofstream(path) << R"({"name": "two-nodes", "sites": [{"name": "lab",
      "fabric": {"latency_us": 0.0, "source": "test: the NIC latency includes the switch"},
      "node_groups": [{"name": "node", "count": 2, "gpu": "h100-sxm", "gpus_per_node": 1,
        "intra_node": {"bandwidth_GBps": 370, "latency_us": 8.0, "source": "test"},
        "nic": {"bandwidth_Gbps": 100, "latency_us": 24.0, "source": "test"}}]}]})";
    return load_cluster(path, test::shipped_catalog().keys());
  }();
  return c;
}

RunOptions pipeline_of_two(const std::string& schedule = "1f1b") {
  RunOptions o;
  o.plan.pp = 2;
  o.plan.seq_length = 1024;
  o.plan.global_batch_size = 4;
  o.schedule = schedule;
  return o;
}

RunResult run(const TransformerConfig& model, const RunOptions& o) {
  return simulate_training(two_nodes(), test::shipped_catalog(), model, o);
}

}  // namespace

TEST_CASE("tied embeddings on two pipeline ranks: one all-reduce of their main gradients, S/B + 2L") {
  const TransformerConfig& model = test::shipped_model("llama-3.2-1b");
  REQUIRE(model.tied_embeddings);
  const RunResult r = run(model, pipeline_of_two());
  const double bytes = static_cast<double>(model.vocab_size) * model.hidden_size * 4;
  CHECK(r.tied_embedding_ranks[0] == 0);
  CHECK(r.tied_embedding_ranks[1] == 1);
  CHECK(r.tied_embedding_bytes_per_gpu == doctest::Approx(bytes).epsilon(1e-12));
  CHECK(r.tied_embedding_reduce_s == doctest::Approx(bytes / kNicBytesPerS + 2 * kNicLatencyS).epsilon(1e-9));
  // Neither rank steps its optimizer before it is done: it is exposed on both.
  for (double exposed : r.gradient_reduce_exposed_s_per_rank) CHECK(exposed >= r.tied_embedding_reduce_s);
  CHECK(r.iteration_time_s >= r.pipeline_time_s + r.tied_embedding_reduce_s);

  // fp16 without --accumulate-allreduce-grads-in-fp32 keeps 2-byte main gradients.
  RunOptions fp16 = pipeline_of_two();
  fp16.plan.dtype = Dtype::kFp16;
  CHECK(run(model, fp16).tied_embedding_bytes_per_gpu == doctest::Approx(bytes / 2).epsilon(1e-12));
}

TEST_CASE("no tied-embedding all-reduce when the embeddings are untied or one rank holds both ends") {
  TransformerConfig untied = test::shipped_model("llama-3.2-1b");
  untied.tied_embeddings = false;
  CHECK(run(untied, pipeline_of_two()).tied_embedding_ranks[0] == -1);
  const TransformerConfig& tied = test::shipped_model("llama-3.2-1b");
  // A V-shaped schedule puts the first and the last stage on rank 0.
  RunOptions v_shape = pipeline_of_two("zb-v");
  v_shape.plan.vpp = 2;
  const RunResult v = run(tied, v_shape);
  CHECK(v.tied_embedding_ranks[0] == -1);
  CHECK(v.tied_embedding_reduce_s == 0);
  RunOptions one_rank = pipeline_of_two();
  one_rank.plan.pp = 1;
  CHECK(run(tied, one_rank).tied_embedding_ranks[0] == -1);
}
