#!/usr/bin/env python3
"""Time a real training step of a Llama-style model on one GPU and print it beside hetsim's
prediction for the same model, batch and sequence length.

The model is built from a HuggingFace config.json (random weights, bf16): embedding, decoder
layers of RMSNorm -> grouped-query attention with rotary embeddings (PyTorch's fused
scaled_dot_product_attention, causal) -> RMSNorm -> SwiGLU MLP, final norm and LM head; AdamW.
One step = forward + backward + optimizer step. Warm-up steps first, then the median of several
timed steps, each bracketed by torch.cuda.synchronize().

  python3 tools/calibrate/pytorch_step.py --config models/configs/llama-3.2-1b.json \
      --hetsim build/tools/hetsim --profile out/profile.json
"""
import argparse
import json
import math
import statistics
import subprocess
import sys
import time


def hetsim_run_command(args):
    """The one place that says how `hetsim run` is called: one GPU, no model parallelism."""
    return [args.hetsim, "run",
            "--cluster", args.cluster,
            "--model", args.config,
            "--tp", "1", "--pp", "1",
            "--mbs", str(args.batch), "--gbs", str(args.batch),
            "--seq-length", str(args.seq),
            # The PyTorch model attends through scaled_dot_product_attention (a fused kernel that
            # keeps no s x s scores), which hetsim models as FlashAttention.
            "--use-flash-attn",
            "--profile", args.profile,
            "--json"]


def build_model(torch, config):
    nn = torch.nn
    F = torch.nn.functional
    hidden = config["hidden_size"]
    heads = config["num_attention_heads"]
    kv_heads = config.get("num_key_value_heads", heads)
    head_dim = config.get("head_dim", hidden // heads)
    ffn = config["intermediate_size"]
    eps = config.get("rms_norm_eps", 1e-5)
    theta = config.get("rope_theta", 10000.0)

    class RMSNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(hidden))

        def forward(self, x):
            variance = x.float().pow(2).mean(-1, keepdim=True)
            return (x.float() * torch.rsqrt(variance + eps)).to(x.dtype) * self.weight

    def rotate(x, cos, sin):
        x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
        return x * cos + torch.cat((-x2, x1), dim=-1) * sin

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1, self.norm2 = RMSNorm(), RMSNorm()
            self.qkv = nn.Linear(hidden, (heads + 2 * kv_heads) * head_dim, bias=False)
            self.out = nn.Linear(heads * head_dim, hidden, bias=False)
            self.gate_up = nn.Linear(hidden, 2 * ffn, bias=False)
            self.down = nn.Linear(ffn, hidden, bias=False)

        def forward(self, x, cos, sin):
            b, s, _ = x.shape
            q, k, v = self.qkv(self.norm1(x)).split(
                [heads * head_dim, kv_heads * head_dim, kv_heads * head_dim], dim=-1)
            q = rotate(q.view(b, s, heads, head_dim).transpose(1, 2), cos, sin)
            k = rotate(k.view(b, s, kv_heads, head_dim).transpose(1, 2), cos, sin)
            v = v.view(b, s, kv_heads, head_dim).transpose(1, 2)
            k = k.repeat_interleave(heads // kv_heads, dim=1)
            v = v.repeat_interleave(heads // kv_heads, dim=1)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.out(a.transpose(1, 2).reshape(b, s, heads * head_dim))
            gate, up = self.gate_up(self.norm2(x)).chunk(2, dim=-1)
            return x + self.down(F.silu(gate) * up)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(config["vocab_size"], hidden)
            self.layers = nn.ModuleList(Layer() for _ in range(config["num_hidden_layers"]))
            self.norm = RMSNorm()
            self.head = nn.Linear(hidden, config["vocab_size"], bias=False)

        def forward(self, ids):
            s = ids.shape[1]
            inv = 1.0 / (theta ** (torch.arange(0, head_dim, 2, device=ids.device).float() / head_dim))
            angles = torch.outer(torch.arange(s, device=ids.device).float(), inv)
            angles = torch.cat((angles, angles), dim=-1)
            cos, sin = angles.cos().to(torch.bfloat16), angles.sin().to(torch.bfloat16)
            x = self.embed(ids)
            for layer in self.layers:
                x = layer(x, cos, sin)
            return self.head(self.norm(x))

    return Model()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", required=True, help="HuggingFace config.json of a Llama-style model")
    parser.add_argument("--batch", type=int, default=4, help="sequences per step (micro = global batch)")
    parser.add_argument("--seq", type=int, default=2048, help="tokens per sequence")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--hetsim", default="build/tools/hetsim", help="hetsim binary for the prediction")
    parser.add_argument("--cluster", default="topologies/clusters/single-h200.json", help="hetsim cluster file")
    parser.add_argument("--profile", default="", help="calibrated profile for hetsim run")
    parser.add_argument("--json-out", default="", help="write measured and predicted times here")
    args = parser.parse_args()

    try:
        import torch
    except ImportError:
        print("pytorch_step: PyTorch is not installed (pip install torch); nothing was measured", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("pytorch_step: PyTorch sees no CUDA GPU; nothing was measured", file=sys.stderr)
        return 3

    with open(args.config) as f:
        config = json.load(f)
    torch.manual_seed(0)
    model = build_model(torch, config).to(device="cuda", dtype=torch.bfloat16)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    vocab = config["vocab_size"]
    ids = torch.randint(0, vocab, (args.batch, args.seq + 1), device="cuda")
    inputs, labels = ids[:, :-1], ids[:, 1:]

    def step():
        logits = model(inputs)
        loss = torch.nn.functional.cross_entropy(logits.float().view(-1, vocab), labels.reshape(-1))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    for _ in range(args.warmup):
        step()
    times = []
    for _ in range(args.steps):
        torch.cuda.synchronize()
        start = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    measured = statistics.median(times)
    params = sum(p.numel() for p in model.parameters())
    tokens = args.batch * args.seq
    result = {
        "model": args.config, "parameters": params, "batch": args.batch, "seq_length": args.seq,
        "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
        "measured_step_s": measured, "measured_min_s": min(times), "measured_max_s": max(times),
        "tokens_per_s": tokens / measured,
        # 6 N T (Kaplan et al. 2020) for the weights, plus causal attention 6 L s^2 h per sequence.
        "model_tflops_per_s": (6 * params * tokens
                               + 6 * config["num_hidden_layers"] * args.batch * args.seq ** 2 * config["hidden_size"])
        / measured / 1e12,
    }
    print(f"measured: {measured * 1e3:.1f} ms per step (median of {args.steps}; min {min(times) * 1e3:.1f}, "
          f"max {max(times) * 1e3:.1f}), {params / 1e9:.2f} B parameters, {result['tokens_per_s']:.0f} tokens/s")

    command = hetsim_run_command(args)
    try:
        run = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if run.returncode != 0:
            raise RuntimeError(run.stderr.strip() or f"exit code {run.returncode}")
        report = json.loads(run.stdout)
        predicted = report.get("iteration_time_s")
        result["hetsim_report"] = report
        result["predicted_step_s"] = predicted
        if predicted:
            print(f"hetsim:   {predicted * 1e3:.1f} ms per step predicted "
                  f"({100 * (predicted - measured) / measured:+.1f}% vs measured)")
        else:
            print("hetsim:   ran, but its JSON has no iteration_time_s; see the JSON output")
    except (OSError, RuntimeError, ValueError, subprocess.TimeoutExpired) as e:
        result["hetsim_error"] = str(e)
        print(f"hetsim:   no prediction ({' '.join(command)}: {e})")
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
