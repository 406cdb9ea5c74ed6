// `attn translate`: raw text in (a file or stdin), detokenised text out, one line per line. The
// work is decode/text_translation.h's; the closing line on stderr decode/translation_summary.h's.
#include <algorithm>
#include <iostream>
#include <memory>

#include "cli/attention_options.h"
#include "cli/commands.h"
#include "cli/shared_options.h"
#include "core/error.h"
#include "decode/model_directory.h"
#include "decode/text_translation.h"
#include "decode/translation_summary.h"

namespace attn::cli {
namespace {

struct TranslateArguments {
  std::string model;
  std::string precision;  // load_model_directory's ("" as the file is)
  TextTranslationRequest request;
  int threads = 0;
  bool quiet = false;
  AttentionArguments attention;
};

void run(const TranslateArguments& args) {
  apply_threads(args.threads);
  const LoadedModel loaded = load_model_directory(args.model, args.precision);
  TextTranslationRequest request = args.request;
  request.attention = args.attention.file;
  if (const auto selection = args.attention.requested()) request.options.attention = *selection;
  const TranslationStreamTotals totals = translate_text(loaded, request, std::cin, std::cout, std::cerr);
  if (args.quiet) return;
  std::cerr << translation_summary(totals.statistics, totals.lines, request.options.search);
  if (!request.shortlist.empty()) std::cerr << shortlist_summary(totals.statistics, request.options.shortlist_k);
}

}  // namespace

void add_translate_command(CLI::App& app) {
  auto args = std::make_shared<TranslateArguments>();
  CLI::App* sub = app.add_subcommand("translate", "Translate text with a trained model (beam search)");
  sub->add_option("-m,--model", args->model, "model folder (model.safetensors, config.json, vocab.model)")->required();
  add_precision_option(sub, args->precision);
  TextTranslationRequest& r = args->request;
  TranslateOptions& o = r.options;
  sub->add_option("-i,--input", r.input, "input text, one sentence per line ('-': stdin)")->capture_default_str();
  sub->add_option("-o,--output", r.output, "output file, written atomically ('-': stdout)")->capture_default_str();
  SearchOptions& s = o.search;
  sub->add_option("-b,--beam", s.beam_size, "beam size (1: greedy)")->capture_default_str()->check(CLI::Range(1, 1000));
  sub->add_option("--alpha", s.length_penalty, "length penalty alpha: score = log P / ((5 + |Y|) / 6)^alpha")
      ->capture_default_str()
      ->check(finite_in(0, 10));
  sub->add_option("--n-best", s.n_best, "hypotheses per sentence (Moses n-best format when > 1)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_option("--max-length-a", s.max_length_a, "maximum output tokens = a * source tokens + b")
      ->capture_default_str()
      ->check(finite_in(0, 1000));
  sub->add_option("--max-length-b", s.max_length_b, "see --max-length-a")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 20));
  add_batching_options(sub, o.batch_tokens, o.max_batch_sentences);
  sub->add_option("--max-input-tokens", o.max_input_tokens, "crop longer inputs (0: the model's maximum)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 24));
  sub->add_option("--shortlist", r.shortlist,
                  "decode over a lexical shortlist (`attn shortlist build`; docs/shortlist.md): per batch, the "
                  "frequent pieces and each source piece's candidates only");
  sub->add_option("--shortlist-k", o.shortlist_k,
                  "candidates per source piece taken from --shortlist (at most what it was built with)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  add_threads_option(sub, args->threads);
  sub->add_flag("-q,--quiet", args->quiet, "no throughput line on stderr");
  add_attention_options(sub, args->attention);
  sub->add_flag("--alignment", r.alignment,
                "append ' ||| ' and the word alignment of the best translation (Pharaoh i-j, source word first) "
                "to each output line, from cross-attention (docs/alignment.md)");
  sub->add_option("--alignment-layer", r.alignment_layer, "cross-attention layer for --alignment (default: the last)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--alignment-head", r.alignment_head, "a head for --alignment, or mean")->capture_default_str();
  sub->add_option("--alignment-threshold", r.alignment_threshold,
                  "0: each target word links to its most attended source word; > 0: to every source word with at "
                  "least this weight")
      ->capture_default_str()
      ->check(finite_in(0, 1));
  sub->callback([args] {
    SearchOptions& search = args->request.options.search;
    if (search.max_length_a == 0 && search.max_length_b == 0)
      throw Error("--max-length-a 0 and --max-length-b 0 allow no output token: give a or b > 0");
    search.n_best = std::min(search.n_best, search.beam_size);
    run(*args);
  });
}

}  // namespace attn::cli
