// `attn vocab train|encode|decode`: the shared subword vocabulary of source and target.
#include <algorithm>
#include <charconv>
#include <iomanip>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands.h"
#include "core/text_file.h"
#include "core/error.h"
#include "core/utf8.h"
#include "data/vocabulary.h"
#include "data/vocabulary_training.h"

namespace attn::cli {
namespace {

constexpr const char* kStdin = "<stdin>";

struct TrainArguments {
  std::vector<std::string> inputs;
  std::string model_prefix;
  std::int32_t vocab_size = 8000;
  bool verbose = false;
};

struct CodecArguments {
  std::string model;
  bool pieces = false;
};

void print_training_report(const data::VocabularyTrainingReport& report) {
  std::cout << std::fixed << std::setprecision(2);
  std::cout << "vocabulary: " << report.vocab_size << " pieces (pad=" << data::kPadId << " unk=" << data::kUnkId
            << " bos=" << data::kBosId << " eos=" << data::kEosId << ", 256 byte-fallback pieces)\n"
            << "  wrote " << report.model_file.string() << " and " << report.vocab_file.string() << "\n";
  for (const auto& input : report.inputs) {
    std::cout << "  " << input.file.string() << ": " << input.sentences << " sentences, " << input.pieces_per_sentence()
              << " pieces per sentence, byte-fallback pieces " << std::setprecision(4)
              << 100.0 * input.byte_piece_fraction() << std::setprecision(2) << "%\n";
  }
  std::cout << "  training " << report.training_seconds << " s, statistics " << report.statistics_seconds << " s\n";
}

// Calls `handle(line, line_number)` for each line of stdin, without its line ending.
template <typename Handler>
void for_each_stdin_line(Handler&& handle) {
  std::string line;
  for (std::size_t number = 1; read_line(std::cin, line); ++number) {
    handle(line, number);
  }
  if (std::cin.bad()) throw_in(kStdin, "read error");
}

// Splits a line at single spaces; pieces never contain a space (SentencePiece writes it as "▁").
void split_at_spaces(std::string_view line, std::vector<std::string>& words) {
  words.clear();
  std::size_t start = 0;
  while (start < line.size()) {
    const auto end = std::min(line.find(' ', start), line.size());
    if (end > start) words.emplace_back(line.substr(start, end - start));
    start = end + 1;
  }
}

void encode_stdin(const CodecArguments& args) {
  const auto vocabulary = data::Vocabulary::load(args.model);
  for_each_stdin_line([&](const std::string& line, std::size_t number) {
    if (auto bad = find_invalid_utf8(line)) {
      throw_at(kStdin, number, "invalid UTF-8 at byte " + std::to_string(*bad + 1) + " of the line");
    }
    const char* separator = "";
    if (args.pieces) {
      for (const auto& piece : vocabulary.encode_pieces(line)) std::cout << std::exchange(separator, " ") << piece;
    } else {
      for (const auto id : vocabulary.encode(line)) std::cout << std::exchange(separator, " ") << id;
    }
    std::cout << '\n';
  });
}

void decode_stdin(const CodecArguments& args) {
  const auto vocabulary = data::Vocabulary::load(args.model);
  std::vector<std::string> words;
  std::vector<std::int32_t> ids;
  for_each_stdin_line([&](const std::string& line, std::size_t number) {
    split_at_spaces(line, words);
    try {
      if (args.pieces) {
        std::cout << vocabulary.decode_pieces(words) << '\n';
        return;
      }
      ids.clear();
      for (const auto& word : words) {
        std::int32_t id = 0;
        const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), id);
        if (error != std::errc() || end != word.data() + word.size()) {
          throw Error("\"" + word + "\" is not a token id");
        }
        ids.push_back(id);
      }
      std::cout << vocabulary.decode(ids) << '\n';
    } catch (const Error& e) {
      throw_at(kStdin, number, e.what());
    }
  });
}

}  // namespace

void add_vocab_command(CLI::App& app) {
  auto* vocab = app.add_subcommand("vocab", "Train and apply the shared SentencePiece BPE vocabulary");
  vocab->require_subcommand(1);

  auto train_args = std::make_shared<TrainArguments>();
  auto* train = vocab->add_subcommand(
      "train",
      "Train one BPE vocabulary shared by source and target on the training text of both languages; "
      "writes PREFIX.model and PREFIX.vocab with pad=0 unk=1 bos=2 eos=3");
  train->add_option("--input", train_args->inputs, "Training text files (UTF-8, one sentence per line)")
      ->required()
      ->expected(1, -1);
  train->add_option("--model", train_args->model_prefix, "Output prefix: writes PREFIX.model and PREFIX.vocab")
      ->required();
  train->add_option("--size", train_args->vocab_size, "Vocabulary size (the paper used ~37000 for WMT)")
      ->capture_default_str()
      ->check(CLI::Range(300, 1000000));
  train->add_flag("--verbose", train_args->verbose, "Show SentencePiece's training log");
  train->callback([train_args] {
    data::VocabularyTrainingOptions options;
    options.inputs.assign(train_args->inputs.begin(), train_args->inputs.end());
    options.model_prefix = train_args->model_prefix;
    options.vocab_size = train_args->vocab_size;
    options.verbose = train_args->verbose;
    print_training_report(data::train_vocabulary(options));
  });

  auto codec_args = std::make_shared<CodecArguments>();
  auto* encode =
      vocab->add_subcommand("encode", "Encode stdin lines into token ids (space-separated), one line per line");
  auto* decode = vocab->add_subcommand("decode", "Decode lines of token ids (space-separated) from stdin into text");
  for (auto* codec : {encode, decode}) {
    codec->add_option("--model", codec_args->model, "Vocabulary model file (PREFIX.model)")->required();
    codec->add_flag("--pieces", codec_args->pieces, "Pieces instead of ids");
  }
  encode->callback([codec_args] { encode_stdin(*codec_args); });
  decode->callback([codec_args] { decode_stdin(*codec_args); });
}

}  // namespace attn::cli
