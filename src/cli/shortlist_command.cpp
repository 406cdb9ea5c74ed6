// `attn shortlist build`: a lexical shortlist for decoding (decode/shortlist.h, docs/shortlist.md).
#include <chrono>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "core/error.h"
#include "data/vocabulary.h"
#include "decode/shortlist.h"

namespace attn::cli {
namespace {

struct ShortlistArguments {
  std::string model, source, target, out;
  ShortlistOptions options;
};

void build(const ShortlistArguments& args) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto vocabulary = data::Vocabulary::load((std::filesystem::path(args.model) / "vocab.model").string());
  const Shortlist shortlist = build_shortlist(vocabulary, args.source, args.target, args.options);
  shortlist.save(args.out);
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
      "build", "from parallel text: each source piece's likeliest target pieces (IBM Model 1) and the most frequent");
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
  sub->add_option("--iterations", args->options.iterations, "EM iterations of IBM Model 1")
      ->capture_default_str()
      ->check(CLI::Range(0, 100));
  sub->callback([args] { build(*args); });
}

}  // namespace attn::cli
