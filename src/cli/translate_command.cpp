// `attn translate`: raw text in (a file or stdin), detokenised text out, one line per line.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <omp.h>

#include "cli/attention_options.h"
#include "cli/commands.h"
#include "core/text_file.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/utf8.h"
#include "decode/model_directory.h"
#include "decode/translator.h"
#include "inspect/word_alignment.h"

namespace attn::cli {
namespace {

struct TranslateArguments {
  std::string model;
  std::string precision;  // load_model_directory's ("" as the file is)
  std::string input = "-";
  std::string output = "-";
  TranslateOptions options;
  int threads = 0;
  int chunk_lines = 10000;
  bool quiet = false;
  AttentionArguments attention;
  bool alignment = false;  // append " ||| i-j ..." (Marian's --alignment)
  inspect::AlignmentOptions align;
  std::string align_head = "mean";
  std::string shortlist;
};

// Reads up to `max_lines` lines; invalid UTF-8 is an error naming the line.
bool read_chunk(std::istream& in, const std::string& name, std::size_t& line_number, std::size_t max_lines,
                std::vector<std::string>& lines) {
  lines.clear();
  std::string line;
  while (lines.size() < max_lines && read_line(in, line)) {
    ++line_number;
    if (auto bad = find_invalid_utf8(line))
      throw_at(name, line_number, "invalid UTF-8 at byte " + std::to_string(*bad + 1));
    lines.push_back(std::move(line));
  }
  return !lines.empty();
}

void run(const TranslateArguments& args) {
  if (args.threads > 0) omp_set_num_threads(args.threads);
  const LoadedModel loaded = load_model_directory(args.model, args.precision);
  TranslateOptions options = args.options;
  const ModelConfig& config = loaded.model->config();
  const bool export_attention = !args.attention.file.empty();
  if (!export_attention && args.attention.given_without_file())
    throw Error(
        "--attention-kinds, --attention-layers and --attention-heads choose what --attention FILE writes: "
        "give --attention FILE");
  if (export_attention) options.attention = args.attention.selection();
  inspect::AlignmentOptions align = args.align;
  if (args.alignment) {
    if (options.search.n_best > 1)
      throw Error("--alignment aligns the best translation: it does not go with --n-best above 1");
    align = resolve_alignment(config, options.attention, args.align.layer, args.align_head, args.align.threshold);
  }
  options.export_attention = export_attention || args.alignment;
  if (!args.shortlist.empty())
    options.shortlist = std::make_shared<const Shortlist>(Shortlist::load(args.shortlist, *loaded.vocabulary));
  BatchTranslator translator(*loaded.model, *loaded.vocabulary, options);
  std::ifstream file;
  if (args.input != "-") {
    file.open(args.input, std::ios::binary);
    if (!file) throw_in(args.input, "cannot open");
  }
  std::istream& in = args.input == "-" ? std::cin : file;
  const std::string in_name = args.input == "-" ? "<stdin>" : args.input;
  // A file is written whole or not at all; stdout streams chunk by chunk.
  std::unique_ptr<AtomicFileWriter> writer;
  if (args.output != "-") writer = std::make_unique<AtomicFileWriter>(args.output);
  std::ostream& out = writer ? writer->stream() : std::cout;
  std::unique_ptr<AtomicFileWriter> attention;
  if (export_attention) attention = std::make_unique<AtomicFileWriter>(args.attention.file);

  std::vector<std::string> lines;
  std::size_t line_number = 0, cropped = 0;
  TranslateStatistics total;
  const int n_best = args.options.search.n_best;
  while (read_chunk(in, in_name, line_number, static_cast<std::size_t>(args.chunk_lines), lines)) {
    const std::size_t first = line_number - lines.size() + 1;
    const auto translations = translator.translate(lines);
    for (std::size_t i = 0; i < translations.size(); ++i) {
      const BatchTranslation& t = translations[i];
      if (t.cropped && ++cropped <= 5)
        std::cerr << "warning: " << in_name << ":" << first + i << ": " << t.source_tokens << " tokens, cropped to "
                  << translator.options().max_input_tokens << "\n";
      std::string links;
      if (options.export_attention) {
        const Hypothesis* best = t.n_best.empty() ? nullptr : &t.n_best.front();
        const inspect::AttentionRecord record =
            make_attention_record(*loaded.vocabulary, static_cast<std::int64_t>(first + i), lines[i], t.text,
                                  t.source_ids, best ? best->tokens : std::vector<std::int32_t>{},
                                  best ? best->log_prob : 0.0, best ? best->score : 0.0, t.attention);
        // An empty line has no translation and no attention: its record has none either.
        if (attention) attention->stream() << inspect::to_json_line(record) << "\n";
        if (args.alignment)
          links = " ||| " + (best ? inspect::format_pharaoh(inspect::align_record(record, align)) : "");
      }
      if (n_best <= 1) {
        out << t.text << links << "\n";
        continue;
      }
      // Moses n-best format: sentence index ||| hypothesis ||| score (log-probability / lp).
      for (std::size_t h = 0; h < t.n_best.size(); ++h)
        out << first + i - 1 << " ||| " << t.n_best_text[h] << " ||| " << t.n_best[h].score << "\n";
    }
    out.flush();
    const auto& s = translator.statistics();
    total.sentences += s.sentences;
    total.source_tokens += s.source_tokens;
    total.target_tokens += s.target_tokens;
    total.seconds += s.seconds;
    total.batches += s.batches;
    total.output_rows += s.output_rows;
  }
  if (cropped > 5) std::cerr << "warning: " << cropped - 5 << " more inputs cropped\n";
  if (attention) attention->commit();
  if (writer) writer->commit();
  if (!args.quiet) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "translated %lld sentences (%lld lines) in %.2f s: %.1f sentences/s, %.0f target tokens/s "
                  "(beam %d, alpha %.2f)\n",
                  static_cast<long long>(total.sentences), static_cast<long long>(line_number), total.seconds,
                  total.sentences / std::max(total.seconds, 1e-9), total.target_tokens / std::max(total.seconds, 1e-9),
                  args.options.search.beam_size, args.options.search.length_penalty);
    std::cerr << buf;
    if (options.shortlist)
      std::cerr << "shortlist: " << total.output_rows / std::max<std::int64_t>(total.batches, 1)
                << " output pieces per batch on average (k " << options.shortlist_k << ", " << total.batches
                << " batches)\n";
  }
}

}  // namespace

void add_translate_command(CLI::App& app) {
  auto args = std::make_shared<TranslateArguments>();
  CLI::App* sub = app.add_subcommand("translate", "Translate text with a trained model (beam search)");
  sub->add_option("-m,--model", args->model, "model folder (model.safetensors, config.json, vocab.model)")->required();
  add_precision_option(sub, args->precision);
  sub->add_option("-i,--input", args->input, "input text, one sentence per line ('-': stdin)")->capture_default_str();
  sub->add_option("-o,--output", args->output, "output file, written atomically ('-': stdout)")->capture_default_str();
  SearchOptions& s = args->options.search;
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
  sub->add_option("--batch-tokens", args->options.batch_tokens, "source tokens per batch")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 24));
  sub->add_option("--max-batch-sentences", args->options.max_batch_sentences, "sentences per batch")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 16));
  sub->add_option("--max-input-tokens", args->options.max_input_tokens, "crop longer inputs (0: the model's maximum)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 24));
  sub->add_option("--shortlist", args->shortlist,
                  "decode over a lexical shortlist (`attn shortlist build`; docs/shortlist.md): per batch, the "
                  "frequent pieces and each source piece's candidates only");
  sub->add_option("--shortlist-k", args->options.shortlist_k,
                  "candidates per source piece taken from --shortlist (at most what it was built with)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--threads", args->threads, "CPU threads (0: all cores)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1024));
  sub->add_flag("-q,--quiet", args->quiet, "no throughput line on stderr");
  add_attention_options(sub, args->attention);
  sub->add_flag("--alignment", args->alignment,
                "append ' ||| ' and the word alignment of the best translation (Pharaoh i-j, source word first) "
                "to each output line, from cross-attention (docs/alignment.md)");
  sub->add_option("--alignment-layer", args->align.layer, "cross-attention layer for --alignment (default: the last)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--alignment-head", args->align_head, "a head for --alignment, or mean")->capture_default_str();
  sub->add_option("--alignment-threshold", args->align.threshold,
                  "0: each target word links to its most attended source word; > 0: to every source word with at "
                  "least this weight")
      ->capture_default_str()
      ->check(finite_in(0, 1));
  sub->callback([args] {
    if (args->options.search.max_length_a == 0 && args->options.search.max_length_b == 0)
      throw Error("--max-length-a 0 and --max-length-b 0 allow no output token: give a or b > 0");
    args->options.search.n_best = std::min(args->options.search.n_best, args->options.search.beam_size);
    run(*args);
  });
}

}  // namespace attn::cli
