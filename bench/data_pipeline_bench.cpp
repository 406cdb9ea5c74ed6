// Figures of the data pipeline on a real parallel corpus: tokenisation speed, cache speed, and
// the batches at several budgets.
//   data_pipeline_bench VOCAB.model SOURCE TARGET [BATCH_TOKENS...]
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "core/error.h"
#include "data/batcher.h"
#include "data/parallel_corpus.h"
#include "data/vocabulary.h"

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) try {
  using namespace attn::data;
  if (argc < 4) {
    std::cerr << "usage: data_pipeline_bench VOCAB.model SOURCE TARGET [BATCH_TOKENS...]\n";
    return 2;
  }
  std::vector<std::size_t> budgets;
  for (int i = 4; i < argc; ++i) budgets.push_back(std::stoul(argv[i]));
  if (budgets.empty()) budgets = {4096, 25000};

  const auto vocabulary = Vocabulary::load(argv[1]);
  const auto cache_dir = std::filesystem::temp_directory_path() / "attn_data_pipeline_bench";
  std::filesystem::remove_all(cache_dir);
  ParallelCorpusOptions options{
      .source_file = argv[2], .target_file = argv[3], .cache_dir = cache_dir, .log = &std::cerr};

  const auto cold = ParallelCorpus::load(vocabulary, options);
  const auto warm = ParallelCorpus::load(vocabulary, options);
  const double lines = 2.0 * double(cold.report().lines);
  std::printf("corpus: %s\n", cold.report().summary().c_str());
  std::printf("load + tokenise (no cache): %.3f s, %.0f lines/s over both files\n", cold.report().seconds,
              lines / cold.report().seconds);
  std::printf("load from cache:            %.3f s, %.0f lines/s\n", warm.report().seconds,
              lines / warm.report().seconds);

  for (const auto budget : budgets) {
    Batcher batcher(warm, {.batch_tokens = budget, .seed = 1});
    auto start = std::chrono::steady_clock::now();
    const auto batches = batcher.epoch(0);
    const double plan_seconds = seconds_since(start);
    start = std::chrono::steady_clock::now();
    Batch batch;
    for (std::size_t k = 0; k < batches.size(); ++k) batcher.fill(batches.pairs(k), batch);
    const double fill_seconds = seconds_since(start);
    const auto stats = batcher.statistics(batches);
    std::printf(
        "batch_tokens %zu: %zu batches (largest %zu pairs), padding %.2f%% (source %.2f%%, target %.2f%%); "
        "epoch plan %.3f s, filling all batches %.3f s\n",
        budget, stats.batches, stats.largest_batch, 100 * stats.padding(), 100 * stats.source_padding(),
        100 * stats.target_padding(), plan_seconds, fill_seconds);
  }
  std::filesystem::remove_all(cache_dir);
  return 0;
} catch (const attn::Error& e) {
  std::cerr << "data_pipeline_bench: error: " << e.what() << "\n";
  return 1;
}
