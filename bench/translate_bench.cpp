// Benchmark: translation throughput and latency with incremental decoding.
//   translate_bench [--profile] [--precision fp32|bf16|int8] [PRESET...]      default: small base
// For each preset, greedy and beam 4 at batch sizes 1, 8 and 32: 32-token sources, exactly 40
// output tokens per sentence (EOS at the 40th), vocabulary 8000, random weights (the work does
// not depend on the weights once the lengths are fixed). Prints sentences/s, target tokens/s,
// batch-1 latency and peak resident memory while translating (the peak is reset once the model is
// built: an int8 model is quantized from float32 weights here, where a user loads its int8 file),
// and a line with the model's parameter count and the size of its model.safetensors.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "core/random.h"
#include "decode/beam_search.h"
#include "decode/incremental_decoder.h"
#include "kernels/profiling_backend.h"
#include "model/transformer.h"

namespace {

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

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> presets;
  bool profile = false;  // --profile: time per kernel (adds a synchronisation per call)
  std::string precision = "fp32";
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--profile")
      profile = true;
    else if (std::string(argv[i]) == "--precision" && i + 1 < argc)
      precision = argv[++i];
    else
      presets.push_back(argv[i]);
  }
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
        std::printf(
            "translate %-6s beam=%d batch=%-2d src=%d out=%d sentences/s=%.1f target_tokens/s=%.0f latency_ms=%.1f "
            "peak_rss_MB=%.0f\n",
            preset.c_str(), beam, batch, src_len, out_len, reps * batch / secs, tokens / secs, secs / reps * 1e3,
            peak_rss_mb());
        if (profile) std::printf("%s", profiler.report().c_str());
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
