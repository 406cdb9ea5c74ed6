// `attn score`: log-probability and perplexity of given translations under a model (forced
// decoding), per sentence and for the corpus per subword token.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/attention_options.h"
#include "cli/commands.h"
#include "cli/shared_options.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "decode/forced_pairs.h"
#include "decode/model_directory.h"

namespace attn::cli {
namespace {

struct ScoreArguments {
  std::string model, source, target, precision;
  int batch_sentences = 32;
  int threads = 0;
  AttentionArguments attention;
};

void run(const ScoreArguments& args) {
  apply_threads(args.threads);
  const std::optional<AttentionSelection> selection = args.attention.requested();
  const LoadedModel loaded = load_model_directory(args.model, args.precision);
  const bool export_attention = selection.has_value();
  // The attention file is written whole or not at all.
  std::unique_ptr<AtomicFileWriter> attention;
  if (export_attention) attention = std::make_unique<AtomicFileWriter>(args.attention.file);
  const ForcedPairs pairs = force_decode_files(loaded, args.source, args.target, args.batch_sentences,
                                               export_attention ? &*selection : nullptr);
  double total_log_prob = 0;
  std::int64_t total_tokens = 0;
  std::printf("line\tlog_prob\ttokens\tppl\n");
  for (std::size_t i = 0; i < pairs.results.size(); ++i) {
    const ForcedDecoding& r = pairs.results[i];
    std::printf("%zu\t%.4f\t%d\t%.3f\n", i + 1, r.log_prob, r.target_tokens, std::exp(-r.log_prob / r.target_tokens));
    total_log_prob += r.log_prob;
    total_tokens += r.target_tokens;
    if (attention) attention->stream() << inspect::to_json_line(pairs.record(loaded, i)) << "\n";
  }
  if (attention) attention->commit();
  std::fprintf(stderr,
               "corpus: %zu sentences, %lld target subword tokens (EOS included), log-prob %.2f, "
               "cross-entropy %.4f nats/token, perplexity %.3f\n",
               pairs.results.size(), static_cast<long long>(total_tokens), total_log_prob,
               -total_log_prob / std::max<std::int64_t>(total_tokens, 1),
               std::exp(-total_log_prob / std::max<std::int64_t>(total_tokens, 1)));
}

}  // namespace

void add_score_command(CLI::App& app) {
  auto args = std::make_shared<ScoreArguments>();
  CLI::App* sub =
      app.add_subcommand("score", "Score given translations: log-probability and perplexity (forced decoding)");
  sub->add_option("-m,--model", args->model, "model folder")->required();
  sub->add_option("-s,--source", args->source, "source text")->required();
  sub->add_option("-t,--target", args->target, "target text, line-aligned")->required();
  add_batch_sentences_option(sub, args->batch_sentences);
  add_threads_option(sub, args->threads);
  add_precision_option(sub, args->precision);
  add_attention_options(sub, args->attention);
  sub->callback([args] { run(*args); });
}

}  // namespace attn::cli
