// `attn average`: the element-wise mean of the last k checkpoints (the paper averages the last 5
// for base models and the last 20 for big ones), written as a model folder.
#include <iostream>
#include <map>
#include <memory>

#include "cli/commands.h"
#include "core/error.h"
#include "data/vocabulary.h"
#include "decode/model_directory.h"
#include "train/checkpoint.h"

namespace attn::cli {
namespace {

struct AverageArguments {
  std::string run;
  int last = 5;
  std::vector<std::string> checkpoints;
  std::string out;
  std::string vocabulary;
};

void run(const AverageArguments& args) {
  std::vector<std::filesystem::path> paths(args.checkpoints.begin(), args.checkpoints.end());
  if (!args.run.empty()) {
    auto all = list_checkpoints(std::filesystem::path(args.run) / "checkpoints");
    if (all.empty()) throw Error("no checkpoints in " + args.run + "/checkpoints");
    const std::size_t k = std::min<std::size_t>(all.size(), static_cast<std::size_t>(args.last));
    paths.insert(paths.end(), all.end() - static_cast<std::ptrdiff_t>(k), all.end());
  }
  if (paths.empty()) throw Error("name checkpoints to average, or --run RUN_DIR");
  const CheckpointContents first = inspect_checkpoint(paths.back());
  std::string vocab_path = args.vocabulary;
  if (vocab_path.empty()) vocab_path = first.options.value("vocabulary", std::string());
  if (vocab_path.empty()) throw Error("--vocabulary is needed: the checkpoints do not name theirs");
  const data::Vocabulary vocabulary = data::Vocabulary::load(vocab_path);
  Transformer model(first.model_config);
  model.set_parameters(average_weights(paths, first.model_config));
  const std::filesystem::path out =
      args.out.empty() ? std::filesystem::path(args.run) / "average" : std::filesystem::path(args.out);
  std::string names;
  for (const auto& p : paths) names += (names.empty() ? "" : ",") + p.filename().string();
  std::map<std::string, std::string> metadata{{"averaged", names}};
  add_languages(metadata,
                {first.options.value("source_lang", std::string()), first.options.value("target_lang", std::string())});
  save_model_directory(out, model, vocabulary, metadata);
  std::cout << "averaged " << paths.size() << " checkpoints (" << names << ") into " << out.string() << "\n";
}

}  // namespace

void add_average_command(CLI::App& app) {
  auto args = std::make_shared<AverageArguments>();
  CLI::App* sub = app.add_subcommand("average", "Average the weights of the last checkpoints into a model folder");
  sub->add_option("checkpoints", args->checkpoints, "checkpoint files (step-N.safetensors)");
  sub->add_option("--run", args->run, "a training run folder: average its newest checkpoints");
  sub->add_option("--last", args->last, "how many of the run's newest checkpoints")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_option("-o,--out", args->out, "model folder to write (default RUN/average)");
  sub->add_option("--vocabulary", args->vocabulary, "vocabulary (default: the one the run trained with)");
  sub->callback([args] { run(*args); });
}

}  // namespace attn::cli
