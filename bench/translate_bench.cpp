// Benchmark: translation throughput and latency with incremental decoding.
//   translate_bench [--profile] [PRESET...]      default: small base
// For each preset, greedy and beam 4 at batch sizes 1, 8 and 32: 32-token sources, exactly 40
// output tokens per sentence (EOS at the 40th), vocabulary 8000, random weights (the work does
// not depend on the weights once the lengths are fixed). Prints sentences/s, target tokens/s,
// batch-1 latency and peak resident memory.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "core/random.h"
#include "decode/beam_search.h"
#include "decode/incremental_decoder.h"
#include "kernels/profiling_backend.h"
#include "model/transformer.h"

namespace {

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> presets;
  bool profile = false;  // --profile: time per kernel (adds a synchronisation per call)
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--profile")
      profile = true;
    else
      presets.push_back(argv[i]);
  }
  if (presets.empty()) presets = {"small", "base"};
  const int src_len = 32, out_len = 40;
  for (const auto& preset : presets) {
    attn::ModelConfig c = attn::ModelConfig::preset(preset);
    c.vocab_size = 8000;
    attn::ProfilingBackend profiler(attn::cpu_backend());
    attn::Transformer model(c, profile ? static_cast<attn::Backend&>(profiler) : attn::cpu_backend());
    model.initialize(1);
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
