// cost_chunk with a measured calibration profile (models/op_cost.hpp): ops the profile has are
// costed from it, the rest by the roofline (models/roofline.hpp) and TP collectives by the ring
// formula (models/tp_collectives.hpp); CostSources counts which source costed each op.
//  - Synthetic profiles built here through ProfileData: the profile's times are used exactly
//    (a looked-up shape equal to a measured one returns the measured time), the others exactly
//    as the roofline gives them, and the counts are those of the layer's ops written out by hand.
//  - vidur's measured forward ops of Llama-2-7B on an A100 80GB SXM (tests/data/vidur, MIT), read
//    through the calibration importer and fitted: the layer's forward at 4096 tokens, TP 1,
//    against the sum of that row's measured medians.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <map>

#include "models/calibration/csv_importer.hpp"
#include "models/calibration/fit_profile.hpp"
#include "models/chunk_cost.hpp"
#include "models/layer_ops.hpp"
#include "models/tp_collectives.hpp"
#include "model_test_support.hpp"

using hetsim::calibration::AttentionPoint;
using hetsim::calibration::GemmPoint;
using hetsim::calibration::Profile;
using hetsim::calibration::ProfileData;
using hetsim::calibration::TransferFit;

namespace {

const std::string kRoot = HETSIM_SOURCE_DIR;

hetsim::TransformerConfig llama2_7b() {
  return hetsim::load_transformer_config(hetsim::test::config_path("llama-2-7b"));
}

hetsim::GpuSpec a100() { return hetsim::GpuCatalog::load(kRoot + "/models/gpus").at("a100-80gb"); }

using hetsim::test::rel;

// Roofline seconds of one pass of every layer op outside `skip_class`.
struct PassSeconds {
  double forward = 0, backward_input = 0, backward_weight = 0;
};
PassSeconds roofline_except(const std::vector<hetsim::LayerOp>& ops, hetsim::OpClass skip_class,
                            const hetsim::GpuSpec& gpu, hetsim::Dtype dtype) {
  PassSeconds s;
  for (const auto& op : ops) {
    if (op.op_class == skip_class) continue;
    s.forward += hetsim::kernel_time(op.kind, op.forward, gpu, dtype);
    s.backward_input += hetsim::kernel_time(op.kind, op.backward_input, gpu, dtype);
    s.backward_weight += hetsim::kernel_time(op.kind, op.backward_weight, gpu, dtype);
  }
  return s;
}

void print_sources(const hetsim::CostSources& s) {
  const auto row = [](const char* name, const hetsim::SourceCounts& c) {
    std::cout << fmt::format("  {:<14} profile {:3}  roofline {:3}\n", name, c.profile, c.roofline);
  };
  row("gemm", s.gemm);
  row("attention", s.attention);
  row("memory-bound", s.memory_bound);
  row("tp-collective", s.tp_collective);
}

}  // namespace

TEST_CASE("GEMMs come from the profile exactly, the ops it lacks from the roofline exactly") {
  // Llama-2-7B, b=1, s=1024, TP 1, bf16, flash attention; a chunk of 2 layers. The profile
  // measured (bf16) every GEMM of the layer, forward Y[m,n] = X[m,k] W[k,n], dgrad (m, k, n),
  // wgrad (k, n, m), with h = 4096, f = 11008, m = 1024 tokens:
  //   QKV (1024, 12288, 4096)  attention-out (1024, 4096, 4096)  gate+up (1024, 22016, 4096)
  //   down (1024, 4096, 11008)
  // The times are made up (not a GPU's); nothing else is in the profile.
  const auto model = llama2_7b();
  hetsim::ParallelPlan plan;
  plan.seq_length = 1024;
  plan.flash_attention = true;
  const hetsim::GpuSpec gpu = a100();
  struct Gemm {
    GemmPoint forward, dgrad, wgrad;
  };
  const std::vector<Gemm> gemms = {
      {{1024, 12288, 4096, 310e-6}, {1024, 4096, 12288, 330e-6}, {4096, 12288, 1024, 350e-6}},
      {{1024, 4096, 4096, 110e-6}, {1024, 4096, 4096, 110e-6}, {4096, 4096, 1024, 130e-6}},
      {{1024, 22016, 4096, 560e-6}, {1024, 4096, 22016, 590e-6}, {4096, 22016, 1024, 620e-6}},
      {{1024, 4096, 11008, 280e-6}, {1024, 11008, 4096, 290e-6}, {11008, 4096, 1024, 300e-6}},
  };
  ProfileData data;
  double forward = 0, dgrad = 0, wgrad = 0;
  for (const Gemm& g : gemms) {
    for (const GemmPoint& p : {g.forward, g.dgrad, g.wgrad}) data.gemm["bf16"].push_back(p);
    forward += g.forward.seconds;
    dgrad += g.dgrad.seconds;
    wgrad += g.wgrad.seconds;
  }
  const Profile profile(std::move(data));

  hetsim::CostSources sources;
  const auto c = hetsim::cost_chunk(model, plan, gpu, {0, 2, false, false}, {}, &profile, &sources);
  // Everything but the GEMMs (norms, flash attention, SwiGLU, residual adds) by the roofline.
  const PassSeconds rest = roofline_except(hetsim::transformer_layer_ops(model, plan),
                                           hetsim::OpClass::kGemm, gpu, plan.dtype);
  const double layers = 2;
  MESSAGE("forward: expected " << layers * (forward + rest.forward) << " s (GEMMs "
                               << layers * forward << " s from the profile), actual " << c.forward_s
                               << " s");
  CHECK(rel(c.forward_s, layers * (forward + rest.forward)) < 1e-12);
  MESSAGE("backward-input: expected " << layers * (dgrad + rest.backward_input) << " s, actual "
                                      << c.backward_input_s << " s");
  CHECK(rel(c.backward_input_s, layers * (dgrad + rest.backward_input)) < 1e-12);
  MESSAGE("backward-weight: expected " << layers * wgrad << " s, actual " << c.backward_weight_s
                                       << " s");
  CHECK(rest.backward_weight == 0.0);
  CHECK(rel(c.backward_weight_s, layers * wgrad) < 1e-12);

  // Counts, per layer: 4 GEMMs x 3 passes from the profile; flash attention F and B, and the two
  // norms, SwiGLU and two residual adds F and B (5 x 2) by the roofline; plus the Adam step.
  print_sources(sources);
  CHECK(sources.gemm.profile == 2 * 12);
  CHECK(sources.gemm.roofline == 0);
  CHECK(sources.attention.profile == 0);
  CHECK(sources.attention.roofline == 2 * 2);
  CHECK(sources.memory_bound.profile == 0);
  CHECK(sources.memory_bound.roofline == 2 * 10 + 1);
  CHECK(sources.tp_collective.total() == 0);  // TP 1: no collectives
}

TEST_CASE(
    "norms, adds, the attention core and TP all-reduces come from the profile where it has them") {
  // Llama-2-7B, b=1, s=1024, TP 2 without SP, bf16, unfused attention; one layer. The profile
  // (made-up times) has no GEMMs; it has:
  //  - rmsnorm and add time-versus-bytes curves with points at the layer's bytes: norm forward
  //    reads x, writes y: 2 * 2 B * 1024 * 4096 = 16,777,216 B; backward reads dy, x, writes dx:
  //    25,165,824 B; residual add reads two, writes one: 25,165,824 B, forward and backward;
  //  - attention (bf16, causal) forward and backward at batch 1, 32/2 = 16 heads, seq 1024,
  //    head_dim 128: the unfused core's QK^T, softmax and PV as one measured unit;
  //  - all_reduce over 2 ranks measured at 4, 8 and 16 MiB; the layer all-reduces the whole
  //    [b*s, h] activation, 2 B * 1024 * 4096 = 8 MiB, twice forward and twice backward.
  const auto model = llama2_7b();
  hetsim::ParallelPlan plan;
  plan.seq_length = 1024;
  plan.tp = 2;
  plan.flash_attention = false;
  const hetsim::GpuSpec gpu = a100();
  const hetsim::TensorParallelLinks links{300e9, 3e-6};

  constexpr double kNormF = 16777216, kNormB = 25165824, kAdd = 25165824;
  constexpr double kNormFs = 21e-6, kNormBs = 33e-6, kAdds = 27e-6;
  constexpr double kAttnF = 410e-6, kAttnB = 1030e-6, kAllReduce = 61e-6;
  ProfileData data;
  data.memory_bound["rmsnorm"] = {{kNormF / 4, 8e-6}, {kNormF, kNormFs}, {kNormB, kNormBs}};
  data.memory_bound["add"] = {{kAdd / 4, 9e-6}, {kAdd, kAdds}};
  data.attention["bf16"] = {AttentionPoint{false, 1, 16, 1024, 128, true, kAttnF},
                            AttentionPoint{true, 1, 16, 1024, 128, true, kAttnB}};
  TransferFit ar;
  ar.ranks = 2;
  ar.fit = {10e-6, 150e9};
  ar.bytes_seconds = {{4194304, 37e-6}, {8388608, kAllReduce}, {16777216, 118e-6}};
  data.collectives["all_reduce"] = {ar};
  const Profile profile(std::move(data));

  hetsim::CostSources sources;
  const auto c =
      hetsim::cost_chunk(model, plan, gpu, {0, 1, false, false}, links, &profile, &sources);
  const auto ops = hetsim::transformer_layer_ops(model, plan);
  // Roofline: the GEMMs and SwiGLU (the profile has neither "silu_mul" nor "silu").
  double gemm_f = 0, gemm_b = 0, gemm_w = 0, swiglu_f = 0, swiglu_b = 0;
  for (const auto& op : ops) {
    if (op.op_class == hetsim::OpClass::kGemm) {
      gemm_f += hetsim::kernel_time(op.kind, op.forward, gpu, plan.dtype);
      gemm_b += hetsim::kernel_time(op.kind, op.backward_input, gpu, plan.dtype);
      gemm_w += hetsim::kernel_time(op.kind, op.backward_weight, gpu, plan.dtype);
    }
    if (op.name == "swiglu") {
      swiglu_f = hetsim::kernel_time(op.kind, op.forward, gpu, plan.dtype);
      swiglu_b = hetsim::kernel_time(op.kind, op.backward_input, gpu, plan.dtype);
    }
  }
  const double expected_f = gemm_f + swiglu_f + 2 * kNormFs + 2 * kAdds + kAttnF + 2 * kAllReduce;
  const double expected_b = gemm_b + swiglu_b + 2 * kNormBs + 2 * kAdds + kAttnB + 2 * kAllReduce;
  MESSAGE("forward: expected " << expected_f << " s, actual " << c.forward_s << " s");
  CHECK(rel(c.forward_s, expected_f) < 1e-12);
  MESSAGE("backward-input: expected " << expected_b << " s, actual " << c.backward_input_s << " s");
  CHECK(rel(c.backward_input_s, expected_b) < 1e-12);
  CHECK(rel(c.backward_weight_s, gemm_w) < 1e-12);
  MESSAGE("TP forward: expected " << 2 * kAllReduce << " s (profile), actual "
                                  << c.tp_comm_forward_s << " s");
  CHECK(rel(c.tp_comm_forward_s, 2 * kAllReduce) < 1e-12);
  CHECK(rel(c.tp_comm_backward_s, 2 * kAllReduce) < 1e-12);

  print_sources(sources);
  CHECK(sources.gemm.profile == 0);
  CHECK(sources.gemm.roofline == 4 * 3);
  CHECK(sources.attention.profile == 3 * 2);  // QK^T, softmax, PV; F and B
  CHECK(sources.attention.roofline == 0);
  CHECK(sources.memory_bound.profile == 4 * 2);       // two norms, two adds; F and B
  CHECK(sources.memory_bound.roofline == 1 * 2 + 1);  // SwiGLU F and B, the Adam step
  CHECK(sources.tp_collective.profile == 4);
  CHECK(sources.tp_collective.roofline == 0);

  SUBCASE(
      "with sequence parallelism the profile lacks all-gather and reduce-scatter: ring formula") {
    // Ring, t = 2, S = 8 MiB: (t-1)/t * S / B + (t-1) L per all-gather or reduce-scatter; two of
    // each forward; backward two output-gradient all-gathers, two input all-gathers beside the
    // dgrads (longer than these collectives, so hidden but for the dgrads' slowdown while they
    // run, kOverlapComputeSlowdown) and two reduce-scatters (B's when split).
    plan.sequence_parallel = true;
    hetsim::CostSources sp_sources;
    const auto sp =
        hetsim::cost_chunk(model, plan, gpu, {0, 1, false, false}, links, &profile, &sp_sources);
    const double S = 8388608, pass = 0.5 * S / 300e9 + 3e-6;
    MESSAGE("TP forward: expected " << 4 * pass << " s (ring), actual " << sp.tp_comm_forward_s
                                    << " s");
    CHECK(rel(sp.tp_comm_forward_s, 4 * pass) < 1e-12);
    const double slowdown = hetsim::kOverlapComputeSlowdown;
    CHECK(rel(sp.tp_comm_backward_s, 4 * pass + 2 * pass * slowdown / (1 + slowdown)) < 1e-12);
    CHECK(sp_sources.tp_collective.profile == 0);
    CHECK(sp_sources.tp_collective.roofline == 10);
  }
}

TEST_CASE("no profile, or one without the plan's dtype, costs exactly what the roofline does") {
  // A 3-layer Llama-2-7B chunk with the embedding and the LM head, TP 4 with SP, selective
  // recompute, unfused attention: the five-argument cost_chunk (roofline and ring formula)
  // against the profile overload, field by field.
  const auto model = llama2_7b();
  hetsim::ParallelPlan plan;
  plan.tp = 4;
  plan.sequence_parallel = true;
  plan.seq_length = 2048;
  plan.recompute = hetsim::Recompute::kSelective;
  const hetsim::GpuSpec gpu = a100();
  const hetsim::TensorParallelLinks links{300e9, 3e-6};
  const hetsim::ChunkSpan span{0, 3, true, true};
  ProfileData fp16_only;  // the plan is bf16
  fp16_only.gemm["fp16"] = {GemmPoint{2048, 4096, 4096, 1e-4}};
  fp16_only.attention["fp16"] = {AttentionPoint{false, 1, 8, 2048, 128, true, 1e-4}};
  const Profile other_dtype(std::move(fp16_only));

  const auto plain = hetsim::cost_chunk(model, plan, gpu, span, links);
  for (const Profile* profile : {static_cast<const Profile*>(nullptr), &other_dtype}) {
    hetsim::CostSources sources;
    const auto c = hetsim::cost_chunk(model, plan, gpu, span, links, profile, &sources);
    CHECK(c.forward_s == plain.forward_s);
    CHECK(c.backward_input_s == plain.backward_input_s);
    CHECK(c.backward_weight_s == plain.backward_weight_s);
    CHECK(c.recompute_s == plain.recompute_s);
    CHECK(c.tp_comm_forward_s == plain.tp_comm_forward_s);
    CHECK(c.tp_comm_backward_s == plain.tp_comm_backward_s);
    CHECK(c.optimizer_step_s == plain.optimizer_step_s);
    CHECK(sources.gemm.profile + sources.attention.profile + sources.memory_bound.profile +
              sources.tp_collective.profile ==
          0);
    // Per layer: 4 GEMMs x 3 passes, the attention core (QK^T, softmax, PV) x 2, memory-bound
    // (2 norms, SwiGLU, 2 adds) x 2; embedding: the lookup's F and W; LM head: its GEMM x 3,
    // final norm F and B, cross entropy F and B; the Adam step. Collectives: per layer 6
    // all-gathers and 4 reduce-scatters; embedding 1 reduce-scatter and 1 all-gather; LM head 2
    // all-gathers, 3 all-reduces, 1 reduce-scatter.
    CHECK(sources.gemm.roofline == 3 * 12 + 3);
    CHECK(sources.attention.roofline == 3 * 6);
    CHECK(sources.memory_bound.roofline == 3 * 10 + 2 + 4 + 1);
    CHECK(sources.tp_collective.roofline == 3 * 10 + 2 + 6);
  }
}

TEST_CASE(
    "vidur A100: a Llama-2-7B layer's forward at 4096 tokens, TP 1, against the measured ops") {
  // vidur's mlp.csv rows time one Llama-2-7B layer's forward ops on an A100 80GB SXM in fp16 (ms,
  // median of repetitions), by num_tokens and TP degree; imported with the shipped mapping
  // models/calibration/mappings/vidur_compute.json (shapes and bytes per op documented there)
  // and fitted into a profile. The rows hold no attention core (vidur times it apart), so the
  // profile has none and cost_chunk costs it by the roofline; it is left out of the comparison.
  // The row's ops that a hetsim layer has: input and post-attention RMSNorm, the QKV,
  // attention-out, gate+up and down GEMMs, SiLU*mul, and the residual add (one [tokens, h] add,
  // of which a layer has two). Not compared: RoPE (not modeled, models/README.md) and the
  // embedding (not part of a layer); they are printed.
  const std::string mapping = kRoot + "/models/calibration/mappings/vidur_compute.json";
  const auto measurements = hetsim::calibration::import_csv(
      kRoot + "/tests/data/vidur/compute/a100/meta-llama/Llama-2-7b-hf/mlp.csv", mapping);
  // The file has two rows at 4096 tokens, TP 1 (repeated runs): per op, the median of the two,
  // as the fit combines repeated shapes.
  std::map<std::string, std::vector<double>> row;
  std::vector<hetsim::calibration::Measurement> without_4096;
  for (const auto& m : measurements) {
    if (m.tag("num_tokens") == 4096) {
      if (m.tag("tp") == 1) row[m.label].push_back(m.seconds);
    } else {
      without_4096.push_back(m);
    }
  }
  REQUIRE(row.size() == 10);
  const auto measured = [&](const std::string& label) {
    return hetsim::calibration::median(row.at(label));
  };
  const double measured_layer = measured("input_layernorm") + measured("attn_pre_proj") +
                                measured("attn_post_proj") + measured("post_attention_layernorm") +
                                measured("mlp_up_proj") + measured("mlp_act") +
                                measured("mlp_down_proj") + 2 * measured("add");

  const auto model = llama2_7b();
  hetsim::ParallelPlan plan;
  plan.seq_length = 4096;
  plan.dtype = hetsim::Dtype::kFp16;
  plan.flash_attention = true;
  const hetsim::GpuSpec gpu = a100();
  double core_roofline = 0;
  for (const auto& op : hetsim::transformer_layer_ops(model, plan)) {
    if (op.op_class == hetsim::OpClass::kAttention) {
      core_roofline += hetsim::kernel_time(op.kind, op.forward, gpu, plan.dtype);
    }
  }
  const double roofline_layer =
      hetsim::cost_chunk(model, plan, gpu, {0, 1, false, false}, {}).forward_s;

  // Fitted on every row, and on every row but the 4096-token ones (then 4096 is predicted from
  // the token counts below it).
  const std::vector<std::pair<std::string, const std::vector<hetsim::calibration::Measurement>*>>
      fits = {{"fit on all rows", &measurements},
              {"fit without the 4096-token rows", &without_4096}};
  std::cout << fmt::format(
      "vidur A100 80GB SXM, Llama-2-7B layer forward, 4096 tokens, TP 1, fp16:\n"
      "  measured (sum of the row's medians, 2 x add): {:.4f} ms; not compared: RoPE {:.4f} ms, "
      "embedding {:.4f} ms\n"
      "  roofline only (cost_chunk, no profile): {:.4f} ms, of which attention core {:.4f} ms; "
      "without it {:.4f} ms, error against measured {:+.2f}%\n",
      1e3 * measured_layer, 1e3 * measured("attn_rope"), 1e3 * measured("emb"),
      1e3 * roofline_layer, 1e3 * core_roofline, 1e3 * (roofline_layer - core_roofline),
      100 * (roofline_layer - core_roofline - measured_layer) / measured_layer);
  for (const auto& [title, ms] : fits) {
    const Profile profile = hetsim::calibration::fit_profile(*ms, {});
    hetsim::CostSources sources;
    const auto c =
        hetsim::cost_chunk(model, plan, gpu, {0, 1, false, false}, {}, &profile, &sources);
    const double compared = c.forward_s - core_roofline;
    std::cout << fmt::format(
        "  {}: cost_chunk forward {:.4f} ms = {:.4f} ms without the attention core (roofline "
        "{:.4f} ms); error against measured {:+.2f}%\n",
        title, 1e3 * c.forward_s, 1e3 * compared, 1e3 * core_roofline,
        100 * (compared - measured_layer) / measured_layer);
    print_sources(sources);
    CHECK(rel(compared, measured_layer) < 0.10);
    // Per layer: 4 GEMMs x 3 passes from the profile; the flash attention core (F, B) by the
    // roofline; norms (rmsnorm), SiLU*mul (silu_mul) and adds (add) from the profile, F and B;
    // the Adam step by the roofline (vidur has no "adam").
    CHECK(sources.gemm.profile == 12);
    CHECK(sources.attention.roofline == 2);
    CHECK(sources.memory_bound.profile == 10);
    CHECK(sources.memory_bound.roofline == 1);
  }
}
