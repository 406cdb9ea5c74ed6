// `attn vocab train|encode|decode`: the shared subword vocabulary of source and target. The work
// is data/vocabulary_training.h's, data/vocabulary_training_report.h's and data/token_lines.h's.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "data/token_lines.h"
#include "data/vocabulary.h"
#include "data/vocabulary_training.h"
#include "data/vocabulary_training_report.h"

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
    std::cout << data::describe_vocabulary_training(data::train_vocabulary(options));
  });

  auto codec_args = std::make_shared<CodecArguments>();
  auto* encode =
      vocab->add_subcommand("encode", "Encode stdin lines into token ids (space-separated), one line per line");
  auto* decode = vocab->add_subcommand("decode", "Decode lines of token ids (space-separated) from stdin into text");
  for (auto* codec : {encode, decode}) {
    codec->add_option("--model", codec_args->model, "Vocabulary model file (PREFIX.model)")->required();
    codec->add_flag("--pieces", codec_args->pieces, "Pieces instead of ids");
  }
  encode->callback([codec_args] {
    data::encode_lines(data::Vocabulary::load(codec_args->model), std::cin, kStdin, std::cout, codec_args->pieces);
  });
  decode->callback([codec_args] {
    data::decode_lines(data::Vocabulary::load(codec_args->model), std::cin, kStdin, std::cout, codec_args->pieces);
  });
}

}  // namespace attn::cli
