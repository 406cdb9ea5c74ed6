// `attn quantize`: a model folder with int8 weights (docs/model-format.md, "int8 models") from a
// float32 one: a quarter of the size, and faster to translate with.
#include <cstdio>
#include <map>
#include <memory>

#include "cli/commands.h"
#include "core/error.h"
#include "decode/model_directory.h"

namespace attn::cli {
namespace {

struct QuantizeArguments {
  std::string model, out;
};

void run(const QuantizeArguments& args) {
  if (std::filesystem::weakly_canonical(args.model) == std::filesystem::weakly_canonical(args.out))
    throw Error("--out must differ from --model: the float32 model is kept");
  const LoadedModel loaded = load_model_directory(args.model, "int8");
  std::map<std::string, std::string> metadata{{"attn.quantized_from", args.model}};
  add_languages(metadata, loaded.languages);
  save_model_directory(args.out, *loaded.model, *loaded.vocabulary, metadata);
  const auto in_bytes = std::filesystem::file_size(std::filesystem::path(args.model) / "model.safetensors");
  const auto out_bytes = std::filesystem::file_size(std::filesystem::path(args.out) / "model.safetensors");
  std::fprintf(stderr, "wrote %s: model.safetensors %.1f MB (float32: %.1f MB)\n", args.out.c_str(), out_bytes / 1e6,
               in_bytes / 1e6);
}

}  // namespace

void add_quantize_command(CLI::App& app) {
  auto args = std::make_shared<QuantizeArguments>();
  CLI::App* sub = app.add_subcommand(
      "quantize", "Write an int8 copy of a model folder: every weight matrix as int8 rows with one scale per row");
  sub->add_option("-m,--model", args->model, "model folder to read (float32, or int8 to rewrite)")->required();
  sub->add_option("-o,--out", args->out, "model folder to write")->required();
  sub->callback([args] { run(*args); });
}

}  // namespace attn::cli
