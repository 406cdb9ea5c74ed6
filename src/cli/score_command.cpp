// `attn score`: log-probability and perplexity of given translations under a model (forced
// decoding), per sentence and for the corpus per subword token.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "core/error.h"
#include "core/special_tokens.h"
#include "core/text_file.h"
#include "decode/model_directory.h"

namespace attn::cli {
namespace {

struct ScoreArguments {
  std::string model, source, target;
  int batch_sentences = 32;
};

void run(const ScoreArguments& args) {
  const LoadedModel loaded = load_model_directory(args.model);
  Transformer& model = *loaded.model;
  const auto src_lines = read_text_lines(args.source), tgt_lines = read_text_lines(args.target);
  if (src_lines.size() != tgt_lines.size())
    throw Error(args.source + " has " + std::to_string(src_lines.size()) + " lines but " + args.target + " has " +
                std::to_string(tgt_lines.size()));
  const auto src = loaded.vocabulary->encode_lines(src_lines), tgt = loaded.vocabulary->encode_lines(tgt_lines);
  const std::size_t limit = static_cast<std::size_t>(model.config().max_positions - 1);
  double total_log_prob = 0;
  std::int64_t total_tokens = 0;
  std::printf("line\tlog_prob\ttokens\tppl\n");
  for (std::size_t start = 0; start < src.size(); start += static_cast<std::size_t>(args.batch_sentences)) {
    const std::size_t end = std::min(src.size(), start + static_cast<std::size_t>(args.batch_sentences));
    const int B = static_cast<int>(end - start);
    int S = 1, T = 1;
    for (std::size_t i = start; i < end; ++i) {
      if (src[i].size() > limit || tgt[i].size() > limit)
        throw_at(src[i].size() > limit ? args.source : args.target, i + 1,
                 "longer than the model's " + std::to_string(limit) + " tokens");
      S = std::max(S, static_cast<int>(src[i].size()) + 1);
      T = std::max(T, static_cast<int>(tgt[i].size()) + 1);
    }
    std::vector<std::int32_t> s(static_cast<std::size_t>(B) * S, kPadId), ti(static_cast<std::size_t>(B) * T, kPadId),
        to(ti.size(), kPadId), sl(B), tl(B);
    for (int b = 0; b < B; ++b) {
      const auto& x = src[start + b];
      const auto& y = tgt[start + b];
      std::copy(x.begin(), x.end(), s.begin() + static_cast<std::ptrdiff_t>(b) * S);
      s[static_cast<std::size_t>(b) * S + x.size()] = kEosId;
      ti[static_cast<std::size_t>(b) * T] = kBosId;
      std::copy(y.begin(), y.end(), ti.begin() + static_cast<std::ptrdiff_t>(b) * T + 1);
      std::copy(y.begin(), y.end(), to.begin() + static_cast<std::ptrdiff_t>(b) * T);
      to[static_cast<std::size_t>(b) * T + y.size()] = kEosId;
      sl[b] = static_cast<std::int32_t>(x.size()) + 1;
      tl[b] = static_cast<std::int32_t>(y.size()) + 1;
    }
    const auto log_probs = model.sentence_log_probs({B, S, T, s.data(), sl.data(), ti.data(), to.data(), tl.data()});
    for (int b = 0; b < B; ++b) {
      std::printf("%zu\t%.4f\t%d\t%.3f\n", start + b + 1, log_probs[b], tl[b], std::exp(-log_probs[b] / tl[b]));
      total_log_prob += log_probs[b];
      total_tokens += tl[b];
    }
  }
  std::fprintf(stderr, "corpus: %zu sentences, %lld target subword tokens (EOS included), log-prob %.2f, "
               "cross-entropy %.4f nats/token, perplexity %.3f\n", src.size(), static_cast<long long>(total_tokens),
               total_log_prob, -total_log_prob / std::max<std::int64_t>(total_tokens, 1),
               std::exp(-total_log_prob / std::max<std::int64_t>(total_tokens, 1)));
}

}  // namespace

void add_score_command(CLI::App& app) {
  auto args = std::make_shared<ScoreArguments>();
  CLI::App* sub = app.add_subcommand("score", "Score given translations: log-probability and perplexity (forced decoding)");
  sub->add_option("-m,--model", args->model, "model folder")->required();
  sub->add_option("-s,--source", args->source, "source text")->required();
  sub->add_option("-t,--target", args->target, "target text, line-aligned")->required();
  sub->add_option("--batch-sentences", args->batch_sentences, "sentences per batch")->capture_default_str();
  sub->callback([args] { run(*args); });
}

}  // namespace attn::cli
