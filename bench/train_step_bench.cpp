// Benchmark: one full training step (forward, backward, Adam update; dropout and label smoothing
// on) on a batch of 128 sentence pairs × 32 + 32 tokens (~4096 target tokens; --sentences N: N
// pairs, e.g. 32 for the cpu-hour preset's batches of 1024 tokens; --dropout P: the rate, e.g. 0 for
// cpu-hour's first four epochs and 0.1 for its later ones, default the preset's; --vocab N: the shared vocabulary's
// pieces, default 8000; --ema-decay D: keep a moving average of the weights too, as attn train --ema-decay does).
//   train_step_bench [--profile] [--precision fp32|bf16] [--sentences N] [--dropout P] [--vocab N]
//                    [--ema-decay D] [PRESET...]
//                                                                   default: small base, fp32, 128
// Prints target tokens/s and the step time (median step), the GEMM share of the FLOPs, and peak resident memory.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <string>
#include <vector>

#include "core/random.h"
#include "kernels/profiling_backend.h"
#include "model/transformer.h"
#include "train/adam_optimizer.h"

namespace {

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;
}

// Matrix-product FLOPs of one training step (forward 2·m·n·k per product, backward twice that).
double step_gemm_flops(const attn::ModelConfig& c, int B, int S, int T) {
  const double rs = double(B) * S, rt = double(B) * T, d = c.d_model, ff = c.d_ff;
  const double hk = c.heads * c.d_k, hv = c.heads * c.d_v;
  double f = 0;
  f += c.encoder_layers *
       (rs * d * (2 * hk + hv) + rs * hv * d + 2 * rs * d * ff + B * c.heads * (double(S) * S * (c.d_k + c.d_v)));
  f += c.decoder_layers *
       (rt * d * (2 * hk + hv) + rt * hv * d + 2 * rt * d * ff + B * c.heads * (double(T) * T * (c.d_k + c.d_v)) +
        rt * d * hk + rs * d * (hk + hv) + rt * hv * d + B * c.heads * (double(T) * S * (c.d_k + c.d_v)));
  f += rt * d * c.vocab_size;
  return 2 * f * 3;  // multiply-adds → FLOPs; forward + backward (2×)
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> presets;
  bool profile = false;
  attn::MatmulPrecision precision = attn::MatmulPrecision::fp32;
  int B = 128;
  float dropout = -1;  // the preset's
  int vocab = 8000;
  double ema_decay = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--profile")
      profile = true;
    else if (std::string(argv[i]) == "--precision" && i + 1 < argc)
      precision = attn::parse_matmul_precision(argv[++i]);
    else if (std::string(argv[i]) == "--sentences" && i + 1 < argc)
      B = std::max(1, std::atoi(argv[++i]));
    else if (std::string(argv[i]) == "--vocab" && i + 1 < argc)
      vocab = std::max(8, std::atoi(argv[++i]));
    else if (std::string(argv[i]) == "--dropout" && i + 1 < argc) {
      dropout = std::stof(argv[++i]);  // throws on a word that is no number
      if (!(dropout >= 0 && dropout < 1)) {
        std::fprintf(stderr, "train_step_bench: --dropout %s is not a rate from 0 to below 1\n", argv[i]);
        return 2;
      }
    } else if (std::string(argv[i]) == "--ema-decay" && i + 1 < argc) {
      ema_decay = std::stod(argv[++i]);
      if (!(ema_decay >= 0 && ema_decay < 1)) {
        std::fprintf(stderr, "train_step_bench: --ema-decay %s is not a decay from 0 to below 1\n", argv[i]);
        return 2;
      }
    } else
      presets.push_back(argv[i]);
  }
  if (presets.empty()) presets = {"small", "base"};
  const int S = 32, T = 32;
  for (const auto& preset : presets) {
    attn::ModelConfig c = attn::ModelConfig::preset(preset);  // throws for an unknown name, listing the known
    c.vocab_size = vocab;
    if (dropout >= 0) c.dropout = dropout;
    attn::Backend& backend = attn::cpu_backend(precision);
    attn::ProfilingBackend profiler(backend);
    attn::Transformer model(c, profile ? static_cast<attn::Backend&>(profiler) : backend);
    model.initialize(1);
    attn::AdamOptions adam_options;
    adam_options.ema_decay = ema_decay;
    attn::AdamOptimizer adam(model, adam_options);
    attn::Random rng(5);
    std::vector<std::int32_t> src(B * S), tgt_in(B * T), tgt_out(B * T), src_len(B, S), tgt_len(B, T);
    for (auto& x : src) x = 4 + static_cast<std::int32_t>(rng.below(c.vocab_size - 4));
    for (int b = 0; b < B; ++b)
      for (int t = 0; t < T; ++t) {
        tgt_out[b * T + t] = 4 + static_cast<std::int32_t>(rng.below(c.vocab_size - 4));
        tgt_in[b * T + t] = t == 0 ? 2 : tgt_out[b * T + t - 1];
      }
    const attn::TokenBatch batch{B, S, T, src.data(), src_len.data(), tgt_in.data(), tgt_out.data(), tgt_len.data()};
    const double flops = step_gemm_flops(c, B, S, T);
    auto step = [&](int i) {
      model.zero_gradients();
      model.forward_backward(batch, attn::nn::Dropout{c.dropout, static_cast<std::uint64_t>(i)}, 1.0f / (B * T));
      adam.step(1e-4f);
    };
    step(0);  // warm-up: allocations, oneDNN kernels
    profiler.reset();
    // The median step: this machine's two cores are shared, and a neighbour's burst would pull a
    // mean down. The fastest step too: for comparing two builds on a noisy host.
    const int steps = preset == "base" ? 7 : 15;
    std::vector<double> times;
    for (int i = 1; i <= steps; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      step(i);
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(times.begin(), times.end());
    const double secs = times[times.size() / 2];
    std::printf(
        "train_step %-6s precision=%s dropout=%g vocab=%d ema_decay=%g params=%.1fM batch=%dx(%d+%d) tokens/s=%.0f "
        "step_ms=%.1f "
        "gemm_GFLOP/s=%.0f "
        "peak_rss_MB=%.0f workspace_MB=%.0f fastest_step_ms=%.1f\n",
        preset.c_str(), attn::to_string(precision).c_str(), double(c.dropout), c.vocab_size, ema_decay,
        model.parameter_count() / 1e6, B, S, T, B * T / secs, secs * 1e3, flops / secs / 1e9, peak_rss_mb(),
        model.workspace_bytes() / 1048576.0, times.front() * 1e3);
    if (profile) std::printf("%s", profiler.report().c_str());
    std::fflush(stdout);
  }
  return 0;
}
