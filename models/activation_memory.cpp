// Activation bytes one transformer layer keeps from forward to backward, counted tensor by
// tensor after Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
// Models", section 4 and Table 2. For a GPT-3-style layer (MHA, 4h GeLU MLP, dropout, 2-byte
// activations) the sum is exactly the paper's
//   no parallelism  sbh(34 + 5as/h)
//   TP              sbh(10 + 24/t + 5as/(ht))
//   TP + SP         sbh(34/t + 5as/(ht))
//   selective       the 5as/h terms dropped
//   full            2sbh (2sbh/t with SP)
// and the same components give GQA (smaller K, V), SwiGLU (two MLP intermediates), models
// without dropout (no masks, no dropout output) and FlashAttention (no s^2 tensors).
#include "models/chunk_cost.hpp"
#include "models/layer_ops.hpp"

namespace hetsim {

double layer_activation_bytes(const TransformerConfig& model, const ParallelPlan& plan) {
  const double b = plan.micro_batch_size;
  const double s = plan.seq_length;
  const double h = model.hidden_size;
  const double t = plan.tp;
  const double e = activation_element_bytes(plan.dtype);
  const double sbh = s * b * h;
  // Tensors in the norm/dropout region are replicated over TP without SP, sharded with it.
  const double region = plan.sequence_parallel ? 1.0 / t : 1.0;

  if (plan.recompute == Recompute::kFull) return e * sbh * region;  // the layer input only

  const double kv_ratio = static_cast<double>(model.num_kv_heads) / model.num_heads;
  const double mask = model.has_dropout ? 1.0 : 0.0;  // dropout masks: 1 byte per element
  double bytes = 0;
  // Attention block.
  bytes += e * sbh * region;                  // input-norm input
  bytes += e * sbh * region;                  // QKV GEMM input (norm output)
  bytes += e * sbh / t;                       // Q (for QK^T)
  bytes += 2 * e * sbh * kv_ratio / t;        // K and V
  bytes += e * sbh / t;                       // attention-output GEMM input (context)
  bytes += mask * sbh * region;               // post-attention dropout mask
  if (plan.recompute == Recompute::kNone) {
    const double a = model.num_heads;
    const double scores = a * s * s * b / t;  // elements of the score tensor per GPU
    if (plan.flash_attention) {
      bytes += 4.0 * a * s * b / t;           // fp32 row log-sum-exp kept by the fused kernel
    } else {
      bytes += e * scores;                    // softmax output
      bytes += mask * scores;                 // attention dropout mask
      bytes += mask * e * scores;             // attention dropout output (input of P V)
    }
  }
  // MLP block.
  const double sbf = s * b * model.ffn_hidden_size;
  bytes += e * sbh * region;                  // post-attention norm input
  bytes += e * sbh * region;                  // MLP-up GEMM input
  const double intermediates = model.mlp == MlpKind::kSwiGlu ? 2.0 : 1.0;  // gate and up
  bytes += intermediates * e * sbf / t;       // activation-function input(s)
  bytes += e * sbf / t;                       // MLP-down GEMM input
  bytes += mask * sbh * region;               // post-MLP dropout mask
  return bytes;
}

}  // namespace hetsim
