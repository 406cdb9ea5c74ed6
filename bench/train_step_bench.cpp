// Benchmark: one full training step (forward, backward, Adam update; dropout and label smoothing
// on) on a batch of 128 sentence pairs × 32 + 32 tokens (~4096 target tokens; --sentences N: N
// pairs, e.g. 32 for the cpu-hour preset's batches of 1024 tokens; --dropout P: the rate, e.g. 0 for
// cpu-hour's first four epochs and 0.1 for its later ones, default the preset's; --vocab N: the shared vocabulary's
// pieces, default 8000; --ema-decay D: keep a moving average of the weights too, as attn train --ema-decay does;
// --steps N: the timed steps, default 15 (base 7): more for a profiler attached to the run; --varied N:
// N batches of varying widths as the trainer makes them from a budget of --sentences x 32 tokens a side).
//   train_step_bench [--profile] [--precision fp32|bf16] [--sentences N] [--dropout P] [--vocab N]
//                    [--ema-decay D] [--steps N] [--varied N] [PRESET...]
//                                                                   default: small base, fp32, 128
// Prints target tokens/s and the step time (median step), the GEMM share of the FLOPs, and peak resident memory;
// and the step's ceiling on this machine: the time of its matrix products, each timed alone at its own shape,
// operand types and layouts (as gemm_bench times them), with attention's per-(sentence, head) products at the rate
// of the large ones (what a fused attention kernel aims for) — products_ms, ceiling_ms and at_ceiling = ceiling /
// step, the share of the step's time its products would need. The ceiling is read after every step (every round
// of --varied batches), each product the faster of two runs after one that warms its operands; at_ceiling is the
// median of each round's ceiling over its own time, so that a neighbour's burst on a shared host, which slows a
// step and the products beside it alike, does not move it.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "bench_cli.h"
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

// Page faults so far (minor and major): a step that maps fresh memory pays the kernel to zero it.
long page_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt + u.ru_majflt;
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

// One of a step's products alone, on operands of its shape, types and layouts (allocated once).
class ProductTimer {
 public:
  ProductTimer(attn::Backend& be, const attn::ProfilingBackend::Product& p) : be_(be), p_(p) {
    // Elements spanned by an operand: stored rows × ld, the last row only to its end, plus the batch's offsets.
    auto span = [&](std::int64_t rows, std::int64_t cols, std::int64_t ld, std::int64_t outer_stride,
                    std::int64_t inner_stride) {
      std::int64_t n = (rows - 1) * ld + cols;
      if (p.batched) n += (p.batch.outer - 1) * outer_stride + (p.batch.inner - 1) * inner_stride;
      return n;
    };
    auto operand = [&](const attn::MatrixRef& r, int rows, int cols, std::int64_t outer, std::int64_t inner) {
      const bool t = r.trans == attn::Trans::Yes;
      const std::int64_t n = span(t ? cols : rows, t ? rows : cols, r.ld, outer, inner);
      auto* f = static_cast<float*>(allocate(n * sizeof(float)));
      be.fill(f, n, 0.01f);
      attn::MatrixRef out = r;
      out.data = f;
      if (r.dtype == attn::DType::bf16) {
        auto* h = static_cast<attn::Bf16*>(allocate(n * sizeof(attn::Bf16)));
        be.to_bf16(f, n, h);
        out.data = h;
      } else if (r.dtype == attn::DType::f32 && r.rounded) {  // its rounding at hand, as the step has it
        auto* h = static_cast<attn::Bf16*>(allocate(n * sizeof(attn::Bf16)));
        be.to_bf16(f, n, h);
        out.rounded = h;
      } else if (r.dtype != attn::DType::f32) {
        throw std::runtime_error("train_step_bench: a training product with an operand of type " +
                                 std::string(attn::to_string(r.dtype)));
      }
      return out;
    };
    a_ = operand(p.a, p.m, p.k, p.batch.a_outer, p.batch.a_inner);
    b_ = operand(p.b, p.k, p.n, p.batch.b_outer, p.batch.b_inner);
    const std::int64_t cn = span(p.m, p.n, p.ldc, p.batch.c_outer, p.batch.c_inner);
    c_ = static_cast<float*>(allocate(cn * sizeof(float)));
    be.fill(c_, cn, 0);
  }
  ~ProductTimer() {
    for (void* x : owned_) be_.deallocate(x);
  }
  ProductTimer(const ProductTimer&) = delete;
  ProductTimer& operator=(const ProductTimer&) = delete;

  // The faster of two runs on warm operands (a run before them warms them).
  double seconds() {
    double fastest = 0;
    for (int i = 0; i < 3; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      be_.matmul(p_.m, p_.n, p_.k, p_.alpha, a_, b_, p_.beta, c_, p_.ldc, p_.batched ? &p_.batch : nullptr);
      const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (i == 1 || (i > 1 && t < fastest)) fastest = t;
    }
    return fastest;
  }

 private:
  void* allocate(std::size_t bytes) { return owned_.emplace_back(be_.allocate(bytes)); }
  attn::Backend& be_;
  attn::ProfilingBackend::Product p_;
  attn::MatrixRef a_, b_;
  float* c_ = nullptr;
  std::vector<void*> owned_;
};

struct Ceiling {
  double product_seconds = 0;  // the single products, each alone
  double seconds = 0;          // and attention's FLOPs at their rate
};

// The ceiling of a step of one batch, from its products (identical ones timed once): every single
// product at its own rate alone, and the rest of the step's product FLOPs (attention's scores and
// contexts, batched or fused) at the single products' overall rate. Read between the timed steps,
// so that a reading and the steps beside it share the host's state (a neighbour's burst on a
// shared machine slows both, and their ratio holds).
class StepCeiling {
 public:
  StepCeiling(attn::Backend& be, const std::vector<attn::ProfilingBackend::Product>& products, double step_flops)
      : step_flops_(step_flops) {
    using Key = std::tuple<int, int, int, int, int, std::int64_t, std::int64_t, int, int, int>;
    std::map<Key, std::pair<const attn::ProfilingBackend::Product*, int>> distinct;
    for (const auto& p : products) {
      if (p.batched) continue;
      const Key key{p.m,
                    p.n,
                    p.k,
                    static_cast<int>(p.a.dtype) * 2 + (p.a.trans == attn::Trans::Yes),
                    static_cast<int>(p.b.dtype) * 2 + (p.b.trans == attn::Trans::Yes),
                    p.a.ld,
                    p.b.ld,
                    p.ldc,
                    p.beta != 0,
                    (p.a.rounded != nullptr) * 2 + (p.b.rounded != nullptr)};
      auto [it, fresh] = distinct.try_emplace(key, &p, 0);
      ++it->second.second;
    }
    for (const auto& [key, entry] : distinct) {
      timers_.push_back({std::make_unique<ProductTimer>(be, *entry.first), entry.second});
      single_flops_ += entry.second * entry.first->flops();
    }
  }

  Ceiling read() {
    Ceiling out;
    for (auto& [timer, count] : timers_) out.product_seconds += count * timer->seconds();
    out.seconds =
        out.product_seconds + std::max(0.0, step_flops_ - single_flops_) * out.product_seconds / single_flops_;
    return out;
  }

 private:
  std::vector<std::pair<std::unique_ptr<ProductTimer>, int>> timers_;
  double step_flops_ = 0, single_flops_ = 0;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

const char* const kAbout =
    R"(train_step_bench: one full training step (forward, backward, Adam update; dropout and label
smoothing on) on a batch of sentence pairs x (32 + 32) tokens, per model preset (default: small base).
Prints target tokens/s, the median and fastest step, the GEMM FLOP rate, peak memory, and the step's
ceiling on this machine: products_ms (one step's matrix products, each timed alone at its own shape,
types and layouts), ceiling_ms (with attention's per-(sentence, head) products at their rate) and
at_ceiling = ceiling / step, the ceiling read after every step (median of the rounds' ratios). --varied N times N batches of varying widths and row counts, as the
trainer makes them, in whole rounds (--steps / N, default 3): the figures are then the median
round's, per batch. --profile adds the time of every kernel.)";

// One batch of sentence pairs with random pieces: every sentence padded to S + T, its own lengths
// up to `trim` tokens shorter (the padding a batch grouped by length keeps).
struct BenchBatch {
  int B = 0, S = 0, T = 0;
  std::vector<std::int32_t> src, tgt_in, tgt_out, src_len, tgt_len;
  attn::TokenBatch view() const {
    return {B, S, T, src.data(), src_len.data(), tgt_in.data(), tgt_out.data(), tgt_len.data()};
  }
};

BenchBatch random_batch(int B, int S, int T, int trim, int vocab, attn::Random& rng) {
  BenchBatch b;
  b.B = B, b.S = S, b.T = T;
  b.src.resize(static_cast<std::size_t>(B) * S);
  b.tgt_in.resize(static_cast<std::size_t>(B) * T);
  b.tgt_out.resize(b.tgt_in.size());
  for (auto& x : b.src) x = 4 + static_cast<std::int32_t>(rng.below(vocab - 4));
  for (int i = 0; i < B; ++i)
    for (int t = 0; t < T; ++t) {
      b.tgt_out[i * T + t] = 4 + static_cast<std::int32_t>(rng.below(vocab - 4));
      b.tgt_in[i * T + t] = t == 0 ? 2 : b.tgt_out[i * T + t - 1];
    }
  // The first sentence keeps the full width (a batch is as wide as its longest).
  for (int i = 0; i < B; ++i) {
    b.src_len.push_back(i == 0 || trim == 0 ? S : S - static_cast<int>(rng.below(std::min(trim, S - 1) + 1)));
    b.tgt_len.push_back(i == 0 || trim == 0 ? T : T - static_cast<int>(rng.below(std::min(trim, T - 1) + 1)));
  }
  return b;
}

// The batches timed: one of B sentences x (32 + 32) tokens, or (`varied` > 0) that many batches as
// the trainer makes them from a budget of B x 32 tokens a side: a target width from 12 to 60, the
// source's 0.8-1.2 times it, as many sentences as the wider side's budget holds, each sentence up to
// a tenth shorter than its batch's width. Each has its own row count, as the trainer's batches do.
std::vector<BenchBatch> bench_batches(int B, int varied, int vocab) {
  attn::Random rng(5);
  if (varied == 0) return {random_batch(B, 32, 32, 0, vocab, rng)};
  const int budget = B * 32;
  std::vector<BenchBatch> out;
  for (int i = 0; i < varied; ++i) {
    const int T = 12 + static_cast<int>(rng.below(49));
    const int S = std::max(4, static_cast<int>(std::lround(T * (0.8 + 0.4 * rng.uniform()))));
    out.push_back(random_batch(std::max(1, budget / std::max(S, T)), S, T, std::max(S, T) / 10, vocab, rng));
  }
  return out;
}

int run(std::vector<std::string> presets, bool profile, attn::MatmulPrecision precision, int B, float dropout,
        int vocab, double ema_decay, int timed_steps, int varied) {
  if (presets.empty()) presets = {"small", "base"};
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
    const std::vector<BenchBatch> batches = bench_batches(B, varied, c.vocab_size);
    auto step = [&](int i) {
      const BenchBatch& b = batches[static_cast<std::size_t>(i) % batches.size()];
      model.zero_gradients();
      model.forward_backward(b.view(), attn::nn::Dropout{c.dropout, static_cast<std::uint64_t>(i)}, 1.0f / (b.B * b.T));
      adam.step(1e-4f);
    };
    // Warm-up: allocations, oneDNN kernels (every batch's shapes once, as a trainer after its first epoch).
    for (std::size_t i = 0; i < batches.size(); ++i) step(static_cast<int>(i));
    const double peak_mb = peak_rss_mb();  // before the ceiling's model and operands below
    // Target tokens (padded) and products' FLOPs of each batch.
    std::vector<double> tokens, flops;
    for (const auto& b : batches) {
      tokens.push_back(double(b.B) * b.T);
      flops.push_back(step_gemm_flops(c, b.B, b.S, b.T));
    }
    // Each batch's products, recorded on a model of the same shapes (the timed model calls no profiler
    // unless --profile asks for it), for its ceiling.
    std::vector<std::unique_ptr<StepCeiling>> ceilings;
    for (std::size_t i = 0; i < batches.size(); ++i) {
      attn::ProfilingBackend recorder(backend);
      attn::Transformer probe(c, recorder);
      probe.initialize(1);
      probe.zero_gradients();
      probe.forward_backward(batches[i].view(), attn::nn::Dropout{c.dropout, 0}, 1.0f / (batches[i].B * batches[i].T));
      ceilings.push_back(std::make_unique<StepCeiling>(backend, recorder.products(), flops[i]));
    }
    profiler.reset();
    // In rounds: one step (one batch), or every batch once (varied batches); then the ceiling read
    // once. The figures: the median round (this machine's two cores are shared, and a neighbour's
    // burst would pull a mean down) and the fastest, for comparing two builds on a noisy host; the
    // median ceiling reading; and at_ceiling as the median of each round's ceiling over its time.
    const int default_steps = preset == "base" ? 7 : 15;
    const int rounds = varied == 0 ? (timed_steps > 0 ? timed_steps : default_steps)
                                   : (timed_steps > 0 ? std::max(1, timed_steps / varied) : 3);
    const int per_round = varied == 0 ? 1 : varied;
    std::vector<double> round_times, product_readings, ceiling_readings, shares;
    long faults = 0;
    for (int r = 0; r < rounds; ++r) {
      const long faults_before = page_faults();
      double round_time = 0;
      for (int j = 0; j < per_round; ++j) {
        const auto t0 = std::chrono::steady_clock::now();
        step(1 + r * per_round + j);
        round_time += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      }
      faults += page_faults() - faults_before;
      Ceiling ceiling;
      for (auto& one : ceilings) {
        const Ceiling reading = one->read();
        ceiling.product_seconds += reading.product_seconds;
        ceiling.seconds += reading.seconds;
      }
      round_times.push_back(round_time);
      product_readings.push_back(ceiling.product_seconds);
      ceiling_readings.push_back(ceiling.seconds);
      shares.push_back(ceiling.seconds / round_time);
    }
    const int steps = rounds * per_round;
    const double faults_per_step = double(faults) / steps;
    double step_tokens = 0, step_flops = 0;  // a round's: one batch, or all
    for (std::size_t i = 0; i < batches.size(); ++i) step_tokens += tokens[i], step_flops += flops[i];
    const double secs = median(round_times);
    const double fastest = *std::min_element(round_times.begin(), round_times.end());
    std::string shape = std::to_string(B) + "x(32+32)";
    if (varied > 0) {
      int rows_min = 1 << 30, rows_max = 0;
      for (const auto& b : batches) rows_min = std::min(rows_min, b.B * b.T), rows_max = std::max(rows_max, b.B * b.T);
      shape = "varied(" + std::to_string(varied) + " batches of " + std::to_string(B * 32) + " tokens a side, " +
              std::to_string(rows_min) + "-" + std::to_string(rows_max) + " target rows)";
    }
    std::printf(
        "train_step %-6s precision=%s dropout=%g vocab=%d ema_decay=%g params=%.1fM batch=%s tokens/s=%.0f "
        "step_ms=%.1f "
        "gemm_GFLOP/s=%.0f "
        "peak_rss_MB=%.0f workspace_MB=%.0f fastest_step_ms=%.1f products_ms=%.1f ceiling_ms=%.1f at_ceiling=%.0f%% "
        "page_faults/step=%.0f\n",
        preset.c_str(), attn::to_string(precision).c_str(), double(c.dropout), c.vocab_size, ema_decay,
        model.parameter_count() / 1e6, shape.c_str(), step_tokens / secs, secs * 1e3 / batches.size(),
        step_flops / secs / 1e9, peak_mb, model.workspace_bytes() / 1048576.0, fastest * 1e3 / batches.size(),
        median(product_readings) * 1e3 / batches.size(), median(ceiling_readings) * 1e3 / batches.size(),
        100 * median(shares), faults_per_step);
    if (profile) std::printf("%s", profiler.report().c_str());
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{kAbout, "train_step_bench"};
  std::vector<std::string> presets;
  bool profile = false;
  std::string precision = "fp32";
  int sentences = 128, vocab = 8000;
  float dropout = -1;  // the preset's
  double ema_decay = 0;
  int steps = 0;   // the preset's
  int varied = 0;  // one batch of 32 + 32 tokens
  app.add_flag("--profile", profile, "time every kernel (adds a clock reading per call)");
  app.add_option("--precision", precision, "matrix products: fp32, or bf16 (mixed precision)")
      ->check(CLI::IsMember({"fp32", "bf16"}))
      ->capture_default_str();
  app.add_option("--sentences", sentences, "sentence pairs a batch (32: the cpu-hour preset's 1024 target tokens)")
      ->check(attn::bench::at_least(1))
      ->capture_default_str();
  // A number from 0 to below 1 (a rate, a decay).
  const auto below_one = [](const std::string& what) {
    return attn::bench::at_least(0) & CLI::Validator(
                                          [what](std::string& text) -> std::string {
                                            const double v = std::strtod(text.c_str(), nullptr);
                                            return v < 1 ? "" : what + " is below 1, got " + text;
                                          },
                                          "");
  };
  app.add_option("--dropout", dropout, "dropout rate from 0 to below 1 (default: the preset's; cpu-hour: 0, then 0.1)")
      ->check(below_one("a rate"));
  app.add_option("--vocab", vocab, "the shared vocabulary's pieces")
      ->check(attn::bench::at_least(8))
      ->capture_default_str();
  app.add_option("--ema-decay", ema_decay, "keep a moving average of the weights too, as attn train --ema-decay does")
      ->check(below_one("a decay"));
  app.add_option("--steps", steps,
                 "timed steps (default: 15, base 7, --varied N: 3 x N; more for a profiler attached to the run)")
      ->check(attn::bench::at_least(1));
  app.add_option("--varied", varied,
                 "time N batches as the trainer makes them from a budget of --sentences x 32 tokens a side (target "
                 "widths 12-60, each batch its own row count) instead of one of --sentences x (32 + 32)")
      ->check(attn::bench::at_least(1));
  app.add_option("PRESET", presets, "model presets (" + attn::bench::preset_list() + "); default: small base")
      ->check(attn::bench::preset_name());
  return attn::bench::run_main(app, argc, argv, [&] {
    return run(presets, profile, attn::parse_matmul_precision(precision), sentences, dropout, vocab, ema_decay, steps,
               varied);
  });
}
