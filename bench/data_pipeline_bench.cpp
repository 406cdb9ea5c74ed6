// Figures of the data pipeline on a real parallel corpus: tokenisation speed, cache speed, and
// the batches at several budgets.
//   data_pipeline_bench VOCAB.model SOURCE TARGET [BATCH_TOKENS...]   default: 4096 25000
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "bench_cli.h"
#include "data/batcher.h"
#include "data/parallel_corpus.h"
#include "data/vocabulary.h"

namespace {

const char* const kAbout =
    R"(data_pipeline_bench: figures of the data pipeline on a real parallel corpus: tokenisation speed,
cache speed, and the batches at each budget of BATCH_TOKENS (default 4096 25000).)";

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int run(const std::string& vocabulary_file, const std::string& source, const std::string& target,
        std::vector<std::size_t> budgets) {
  using namespace attn::data;
  if (budgets.empty()) budgets = {4096, 25000};

  const auto vocabulary = Vocabulary::load(vocabulary_file);
  const auto cache_dir = std::filesystem::temp_directory_path() / "attn_data_pipeline_bench";
  std::filesystem::remove_all(cache_dir);
  ParallelCorpusOptions options{
      .source_file = source, .target_file = target, .cache_dir = cache_dir, .log = &std::cerr};

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
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{kAbout, "data_pipeline_bench"};
  std::string vocabulary, source, target;
  std::vector<std::size_t> budgets;
  app.add_option("VOCAB.model", vocabulary, "the SentencePiece model")->required();
  app.add_option("SOURCE", source, "the corpus's source side, one sentence a line")->required();
  app.add_option("TARGET", target, "its target side")->required();
  app.add_option("BATCH_TOKENS", budgets, "batch budgets in tokens; default: 4096 25000")
      ->check(attn::bench::at_least(1));
  return attn::bench::run_main(app, argc, argv, [&] { return run(vocabulary, source, target, budgets); });
}
