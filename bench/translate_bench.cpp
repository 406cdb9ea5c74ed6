// Benchmark: translation throughput and latency with incremental decoding.
//   translate_bench [--profile] [--precision fp32|bf16|int8] [--output-rows N] [PRESET...]   default: small base
// What it measures is kAbout below (translate_bench --help prints it).
#include <unistd.h>

#include <algorithm>
#include <numeric>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_cli.h"
#include "core/random.h"
#include "decode/beam_search.h"
#include "decode/incremental_decoder.h"
#include "kernels/device_buffer.h"
#include "kernels/profiling_backend.h"
#include "model/transformer.h"

namespace {

const char* const kAbout = R"(translate_bench: translation throughput and latency with incremental decoding.

For each preset, greedy and beam 4 at batch sizes 1, 8 and 32: 32-token sources, exactly 40
output tokens per sentence (EOS at the 40th), vocabulary 8000, random weights (the work does
not depend on the weights once the lengths are fixed). Prints sentences/s, target tokens/s,
batch-1 latency and peak resident memory while translating (the peak is reset once the model is
built: an int8 model is quantized from float32 weights here, where a user loads its int8 file),
and a line with the model's parameter count and the size of its model.safetensors.
The ceiling: each line also gives the multiply-adds of the run (the model's products and
attention's, counted from the shapes) per second, and the share of the time the run's matrix
products alone would take at the rate the same backend reaches on the same shapes, each product
timed on its own (`gemm_ceiling`): 100% would be a decoder that is nothing but its products, run
back to back at their best rate. --output-rows N decodes over N output pieces (ids 0..N-1, as a
shortlist of N would) instead of the vocabulary.)";

// Peak resident memory (VmHWM of /proc/self/status, which reset_peak_rss starts over).
double peak_rss_mb() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  double kb = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "VmHWM: %lf kB", &kb) == 1) break;
  std::fclose(f);
  return kb / 1024.0;
}

// Starts the peak resident memory (VmHWM) over from the current one (Linux >= 4.0).
void reset_peak_rss() {
  std::FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (!f) return;
  std::fputs("5", f);
  std::fclose(f);
}

struct Product {
  int m, n, k;  // rows × outputs × inputs of an x·Wᵀ
};

// Seconds one x·Wᵀ of this shape takes on `backend` (the median of 7, after a warm-up).
double product_seconds(attn::Backend& backend, const Product& p, bool int8) {
  attn::DeviceBuffer<float> x(backend, static_cast<std::size_t>(p.m) * p.k),
      w(backend, static_cast<std::size_t>(p.n) * p.k), y(backend, static_cast<std::size_t>(p.m) * p.n);
  backend.fill(x.data(), static_cast<std::int64_t>(p.m) * p.k, 0.5f);
  backend.fill(w.data(), static_cast<std::int64_t>(p.n) * p.k, 0.25f);
  // int8 weights: quantized rows with their scales and sums, as an int8 model holds them.
  attn::DeviceBuffer<std::int8_t> q(backend, int8 ? static_cast<std::size_t>(p.n) * p.k : 0);
  attn::DeviceBuffer<float> scales(backend, int8 ? static_cast<std::size_t>(p.n) : 0);
  attn::DeviceBuffer<std::int32_t> sums(backend, int8 ? static_cast<std::size_t>(p.n) : 0);
  if (int8) backend.quantize_rows(w.data(), p.n, p.k, p.k, q.data(), scales.data(), sums.data());
  const attn::MatrixRef weights = int8 ? attn::s8_matrix(q.data(), scales.data(), sums.data(), p.k, attn::Trans::Yes)
                                       : attn::f32_matrix(w.data(), p.k, attn::Trans::Yes);
  const auto run = [&] {
    backend.matmul(p.m, p.n, p.k, 1.0f, attn::f32_matrix(x.data(), p.k), weights, 0.0f, y.data(), p.n, nullptr);
  };
  run();
  std::vector<double> t;
  for (int i = 0; i < 7; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[3];
}

// The multiply-adds and the products-only time of translating `batch` sources of src_len tokens
// into out_len tokens with `rows_per_sentence` hypotheses each (beam search keeps beam rows from
// its second step on). Attention's dot products count as multiply-adds but not in the ceiling.
struct Ceiling {
  double macs = 0, product_seconds = 0;
};
Ceiling ceiling(attn::Backend& backend, bool int8, const attn::ModelConfig& c, int output_rows, int batch, int beam,
                int src_len, int out_len) {
  const int s = src_len + 1, d = c.d_model, hk = c.heads * c.d_k, hv = c.heads * c.d_v;
  Ceiling out;
  std::vector<std::pair<Product, double>> products;  // shape, times run
  // Encoder: every source position through every layer, then each decoder layer's memory K and V.
  const int src_rows = batch * s;
  for (const Product& p : {Product{src_rows, 2 * hk + hv, d}, Product{src_rows, d, hv}, Product{src_rows, c.d_ff, d},
                           Product{src_rows, d, c.d_ff}})
    products.push_back({p, static_cast<double>(c.encoder_layers)});
  products.push_back({Product{src_rows, hk + hv, d}, static_cast<double>(c.decoder_layers)});
  out.macs += static_cast<double>(c.encoder_layers) * batch * s * s * (hk + hv);  // scores and contexts
  for (int t = 0; t < out_len; ++t) {
    const int rows = batch * (t == 0 ? 1 : beam);
    for (const Product& p : {Product{rows, 2 * hk + hv, d}, Product{rows, d, hv}, Product{rows, hk, d},
                             Product{rows, d, hv}, Product{rows, c.d_ff, d}, Product{rows, d, c.d_ff}})
      products.push_back({p, static_cast<double>(c.decoder_layers)});
    products.push_back({Product{rows, output_rows, d}, 1.0});
    out.macs += static_cast<double>(c.decoder_layers) * rows * (t + 1 + s) * (hk + hv);
  }
  // Identical shapes timed once.
  std::vector<std::pair<Product, double>> merged;
  for (const auto& [p, n] : products) {
    auto it = std::find_if(merged.begin(), merged.end(),
                           [&](const auto& q) { return q.first.m == p.m && q.first.n == p.n && q.first.k == p.k; });
    if (it == merged.end())
      merged.push_back({p, n});
    else
      it->second += n;
  }
  for (const auto& [p, n] : merged) {
    out.macs += n * p.m * p.n * p.k;
    out.product_seconds += n * product_seconds(backend, p, int8);
  }
  return out;
}

int run(std::vector<std::string> presets, bool profile, const std::string& precision, int output_rows) {
  const attn::WeightFormat weights = precision == "int8" ? attn::WeightFormat::int8 : attn::WeightFormat::f32;
  attn::Backend& backend = attn::cpu_backend(attn::parse_matmul_precision(precision == "int8" ? "fp32" : precision));
  if (presets.empty()) presets = {"small", "base"};
  const int src_len = 32, out_len = 40;
  for (const auto& preset : presets) {
    attn::ModelConfig c = attn::ModelConfig::preset(preset);
    c.vocab_size = 8000;
    attn::ProfilingBackend profiler(backend);
    attn::Transformer model(c, profile ? static_cast<attn::Backend&>(profiler) : backend, weights);
    model.initialize(1);
    {
      const auto file = std::filesystem::temp_directory_path() / ("translate_bench_" + std::to_string(getpid()));
      model.save_parameters(file);
      std::printf("model %-6s params=%.1fM model_MB=%.1f\n", preset.c_str(), model.parameter_count() / 1e6,
                  std::filesystem::file_size(file) / 1e6);
      std::filesystem::remove(file);
    }
    reset_peak_rss();
    attn::IncrementalDecoder decoder(model);
    if (output_rows > 0) {
      std::vector<std::int32_t> ids(static_cast<std::size_t>(std::min(output_rows, c.vocab_size)));
      std::iota(ids.begin(), ids.end(), 0);
      decoder.set_output_ids(ids);
    }
    attn::Random rng(3);
    for (int beam : {1, 4}) {
      for (int batch : {1, 8, 32}) {
        std::vector<std::vector<std::int32_t>> sources(batch, std::vector<std::int32_t>(src_len));
        for (auto& s : sources)
          for (auto& t : s) t = 4 + static_cast<std::int32_t>(rng.below(c.vocab_size - 4));
        attn::SearchOptions opt;
        opt.beam_size = beam;
        opt.max_length_a = 0;
        opt.max_length_b = out_len;
        opt.min_length = out_len;
        attn::beam_search(decoder, sources, opt);  // warm-up
        profiler.reset();
        const int reps = batch == 1 ? 5 : (preset == "base" ? 2 : 3);
        const auto t0 = std::chrono::steady_clock::now();
        long long tokens = 0;
        for (int r = 0; r < reps; ++r)
          for (const auto& h : attn::beam_search(decoder, sources, opt))
            tokens += static_cast<long long>(h[0].tokens.size()) + 1;
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const Ceiling best =
            ceiling(backend, precision == "int8", c, decoder.output_width(), batch, beam, src_len, out_len);
        std::printf(
            "translate %-6s beam=%d batch=%-2d src=%d out=%d output_rows=%d sentences/s=%.1f target_tokens/s=%.0f "
            "latency_ms=%.1f peak_rss_MB=%.0f GMAC/s=%.1f products_only_ms=%.1f at_ceiling=%.0f%%\n",
            preset.c_str(), beam, batch, src_len, out_len, decoder.output_width(), reps * batch / secs, tokens / secs,
            secs / reps * 1e3, peak_rss_mb(), best.macs / (secs / reps) / 1e9, best.product_seconds * 1e3,
            100.0 * best.product_seconds / (secs / reps));
        if (profile) std::printf("%s", profiler.report().c_str());
        std::fflush(stdout);
      }
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{kAbout, "translate_bench"};
  std::vector<std::string> presets;
  bool profile = false;
  std::string precision = "fp32";
  int output_rows = 0;  // 0: the vocabulary
  app.add_flag("--profile", profile, "time per kernel (adds a synchronisation per call)");
  app.add_option("--precision", precision, "the matrix products' precision")
      ->check(CLI::IsMember({"fp32", "bf16", "int8"}))
      ->capture_default_str();
  app.add_option("--output-rows", output_rows, "decode over N output pieces (0: the vocabulary)")
      ->check(attn::bench::at_least(0))
      ->capture_default_str();
  app.add_option("PRESET", presets, "model presets (" + attn::bench::preset_list() + "); default: small base")
      ->check(attn::bench::preset_name());
  return attn::bench::run_main(app, argc, argv, [&] { return run(presets, profile, precision, output_rows); });
}
