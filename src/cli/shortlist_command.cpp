// `attn shortlist build`: a lexical shortlist for decoding (decode/shortlist.h, docs/shortlist.md).
#include <chrono>
#include <iostream>
#include <map>
#include <memory>

#include "cli/commands.h"
#include "core/error.h"
#include "data/vocabulary.h"
#include "decode/model_directory.h"
#include "decode/shortlist.h"
#include "decode/shortlist_attention.h"

namespace attn::cli {
namespace {

struct ShortlistArguments {
  std::string model, source, target, out;
  ShortlistOptions options;
  int batch_sentences = 32;
};

void build(const ShortlistArguments& args) {
  const auto t0 = std::chrono::steady_clock::now();
  Shortlist shortlist;
  std::size_t skipped = 0;
  if (args.options.method == ShortlistMethod::attention) {
    const LoadedModel model = load_model_directory(args.model);
    shortlist =
        build_attention_shortlist(model, args.source, args.target, args.options, args.batch_sentences, &skipped);
  } else {
    const auto vocabulary = data::Vocabulary::load((std::filesystem::path(args.model) / "vocab.model").string());
    shortlist = build_shortlist(vocabulary, args.source, args.target, args.options);
  }
  shortlist.save(args.out);
  if (skipped > 0) std::cerr << "skipped " << skipped << " pairs longer than the model's positions" << std::endl;
  std::size_t sources = 0, candidates = 0;
  for (std::int32_t id = 0; id < shortlist.vocabulary_size(); ++id) {
    sources += !shortlist.candidates(id).empty();
    candidates += shortlist.candidates(id).size();
  }
  std::cerr << "wrote " << args.out << ": " << sources << " source pieces with " << candidates << " candidates ("
            << shortlist.options().per_source << " at most each), " << shortlist.frequent().size()
            << " frequent pieces; " << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()
            << " s" << std::endl;
}

}  // namespace

void add_shortlist_command(CLI::App& app) {
  CLI::App* shortlist = app.add_subcommand("shortlist", "lexical shortlists for faster decoding (docs/shortlist.md)");
  shortlist->require_subcommand(1);
  auto args = std::make_shared<ShortlistArguments>();
  CLI::App* sub = shortlist->add_subcommand(
      "build",
      "from parallel text: each source piece's likeliest target pieces (IBM Model 1 or the model's attention) "
      "and the most frequent");
  sub->add_option("-m,--model", args->model, "the model folder whose vocabulary the shortlist is for")->required();
  sub->add_option("--train-source", args->source, "source side of the parallel text, one sentence per line")
      ->required();
  sub->add_option("--train-target", args->target, "target side, as many lines")->required();
  sub->add_option("-o,--out", args->out, "the shortlist file to write (atomically)")->required();
  sub->add_option("--per-source", args->options.per_source, "candidates kept per source piece")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--frequent", args->options.frequent, "most frequent target pieces, always in the list")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 24));
  sub->add_option("--method", args->options.method,
                  "where t(target | source) comes from: ibm1 (IBM Model 1 over the pieces) or attention (the "
                  "model's own cross-attention over the training pairs, forced-decoded)")
      ->transform(
          CLI::CheckedTransformer(std::map<std::string, ShortlistMethod>{{"ibm1", ShortlistMethod::ibm1},
                                                                         {"attention", ShortlistMethod::attention}},
                                  CLI::ignore_case))
      ->default_str("ibm1");
  sub->add_option("--iterations", args->options.iterations, "ibm1: EM iterations of IBM Model 1")
      ->capture_default_str()
      ->check(CLI::Range(0, 100));
  sub->add_option("--layer", args->options.attention_layer,
                  "attention: the decoder layer whose cross-attention (mean of its heads) is counted (default: the "
                  "last)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--batch-sentences", args->batch_sentences, "attention: pairs per forced-decoding batch")
      ->capture_default_str()
      ->check(CLI::Range(1, 65536));
  sub->callback([args] { build(*args); });
}

}  // namespace attn::cli
