// `attn translate`: raw text in (a file or stdin), detokenised text out, one line per line; or, with
// --format (or an input named .html, .md, .docx, .odt), a document translated sentence by sentence
// in its format. The work is decode/text_translation.h's and document/file_request.h's; the closing
// line on stderr decode/translation_summary.h's.
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "cli/attention_options.h"
#include "cli/commands.h"
#include "cli/shared_options.h"
#include "core/error.h"
#include "decode/model_directory.h"
#include "decode/search_options.h"
#include "decode/text_translation.h"
#include "decode/translation_summary.h"
#include "document/file_request.h"

namespace attn::cli {
namespace {

struct TranslateArguments {
  std::string model;
  std::string precision;  // load_model_directory's ("" as the file is)
  TextTranslationRequest request;
  int threads = 0;
  bool quiet = false;
  AttentionArguments attention;
  std::string format;  // "" : by the input's name, else lines
  std::string language;
};

// The shared rule (decode/search_options.h), its message after the option as typed.
void check_search_options(const SearchOptions& search) {
  static const std::map<std::string, std::string> flags{{"beam", "--beam"},
                                                        {"n_best", "--n-best"},
                                                        {"alpha", "--alpha"},
                                                        {"max_length_a", "--max-length-a"},
                                                        {"max_length_b", "--max-length-b"}};
  if (const auto problem = check(search)) {
    const auto flag = flags.find(problem->field);
    throw Error((flag == flags.end() ? "" : flag->second + ": ") + problem->message);
  }
}

// The document format asked for, or by the input file's extension; nullopt: one sentence per line.
std::optional<document::Format> document_format(const TranslateArguments& args) {
  if (args.format == "lines") return std::nullopt;
  if (!args.format.empty()) return document::parse_format(args.format);
  const auto by_name = document::format_of_path(args.request.input);
  if (by_name && *by_name != document::Format::text) return by_name;  // a .txt stays one sentence per line
  return std::nullopt;
}

void run_document(const TranslateArguments& args, const LoadedModel& loaded, document::Format format) {
  const TextTranslationRequest& r = args.request;
  if (r.options.search.n_best > 1 || r.alignment || !args.attention.file.empty())
    throw Error("--format " + document::format_name(format) +
                " translates a document: --n-best, --alignment and --attention work one line at a time (--format "
                "lines)");
  document::FileRequest f;
  f.input = r.input, f.output = r.output, f.format = format, f.language = args.language;
  f.options = r.options, f.shortlist = r.shortlist;
  const auto totals = document::translate_document_file(loaded, f, std::cin, std::cout);
  for (const auto& w : totals.warnings) std::cerr << "warning: " << w << "\n";
  if (args.quiet) return;
  std::cerr << translation_summary(totals.statistics, totals.sentences, r.options.search);
}

void run(const TranslateArguments& args) {
  apply_threads(args.threads);
  const LoadedModel loaded = load_model_directory(args.model, args.precision);
  if (const auto format = document_format(args)) return run_document(args, loaded, *format);
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
  BatchTranslatorOptions& o = r.options;
  sub->add_option("-i,--input", r.input, "input text, one sentence per line ('-': stdin); or a document (--format)")
      ->capture_default_str();
  sub->add_option("-o,--output", r.output, "output file, written atomically ('-': stdout)")->capture_default_str();
  SearchOptions& s = o.search;
  // Types only here: the values' limits are decode/search_options.h's, the same on every face.
  sub->add_option("-b,--beam", s.beam_size, "beam size (1: greedy; at most " + std::to_string(kMaxBeam) + ")")
      ->capture_default_str();
  sub->add_option("--alpha", s.length_penalty, "length penalty alpha: score = log P / ((5 + |Y|) / 6)^alpha")
      ->capture_default_str();
  sub->add_option("--n-best", s.n_best, "hypotheses per sentence, at most the beam (Moses n-best format when > 1)")
      ->capture_default_str();
  sub->add_option("--max-length-a", s.max_length_a, "maximum output tokens = a * source tokens + b")
      ->capture_default_str();
  sub->add_option("--max-length-b", s.max_length_b, "see --max-length-a")->capture_default_str();
  add_batching_options(sub, o.batch_tokens, o.max_batch_sentences);
  sub->add_option("--max-input-tokens", o.max_input_tokens,
                  "crop longer lines (0: the model's maximum); in a document, cut longer sentences at a clause (0: the "
                  "length the model was trained on)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 24));
  sub->add_option("--shortlist", r.shortlist,
                  "decode over a lexical shortlist (`attn shortlist build`; docs/shortlist.md): per batch, the "
                  "frequent pieces and each source piece's candidates only");
  sub->add_option("--shortlist-k", o.shortlist_k,
                  "candidates per source piece taken from --shortlist (at most what it was built with)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--format", args->format,
                  "lines (one sentence per line, the default), or a document translated sentence by sentence in its "
                  "layout: text (paragraphs), html, markdown, docx, odt (default for inputs named .html, .htm, .md, "
                  ".docx, .odt: that format)")
      ->check(CLI::IsMember({"lines", "text", "txt", "html", "htm", "markdown", "md", "docx", "odt"}));
  sub->add_option("--source-lang", args->language,
                  "the source language's sentence rules for --format (ISO 639-1; default: the model's source "
                  "language)");
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
    check_search_options(args->request.options.search);
    run(*args);
  });
}

}  // namespace attn::cli
