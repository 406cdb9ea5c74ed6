// libFuzzer target: loading a model file into an int8 model and into a float32 one
// (Transformer::load_parameters, what `attn translate --precision int8` and every load of an int8
// model file do; docs/model-format.md, "int8 models"). The input is model.safetensors for a tiny
// fixed configuration; its I8 matrices come with one float scale per row ("X.weight_scale").
//
// Checked besides memory errors: a file accepted into an int8 model gives finite matrices
// (|q| <= 127 with finite positive scales, or float matrices quantized), and saving that model and
// loading the file again gives the same parameters bit for bit.
//
// Seeds: ATTN_FUZZ_WRITE_SEEDS=DIR build-fuzz/fuzz/int8_model_fuzz writes an int8 and a float32
// file of the tiny configuration into DIR (without the attn.sha256 checksum, which a mutated file
// would fail before anything else is read) and exits.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "fuzz_support.h"
#include "model/safetensors.h"
#include "model/transformer.h"

namespace {

attn::ModelConfig tiny_config() {
  attn::ModelConfig c;
  c.encoder_layers = c.decoder_layers = 1;
  c.d_model = 8;
  c.d_ff = 16;
  c.heads = 2;
  c.d_k = c.d_v = 4;
  c.vocab_size = 16;
  c.max_positions = 16;
  c.validate();
  return c;
}

// A model written by attn, its checksum left out.
void write_seed(const std::string& path, attn::WeightFormat format) {
  attn::Transformer model(tiny_config(), attn::cpu_backend(), format);
  model.initialize(1);
  const std::string saved = path + ".with-checksum";
  model.save_parameters(saved);
  const attn::SafetensorsFile file(saved);
  std::vector<attn::TensorToWrite> tensors;
  for (const auto& [name, entry] : file.entries())
    tensors.push_back({name, entry.shape, file.data().data() + entry.begin, entry.dtype});
  attn::write_safetensors(path, tensors, {});
  std::remove(saved.c_str());
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("ATTN_FUZZ_WRITE_SEEDS")) {
    write_seed(std::string(dir) + "/tiny-int8.safetensors", attn::WeightFormat::int8);
    write_seed(std::string(dir) + "/tiny-f32.safetensors", attn::WeightFormat::f32);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const attn::ModelConfig config = tiny_config();
  const std::string path =
      attn::fuzz::write_scratch_file("model.safetensors", {reinterpret_cast<const char*>(data), size});
  try {
    attn::Transformer model(config, attn::cpu_backend(), attn::WeightFormat::int8);
    model.load_parameters(path);
    const std::vector<float> loaded = model.parameters_to_host();
    for (const auto& t : model.layout().tensors()) {
      if (!attn::is_quantized_tensor(t)) continue;
      for (std::int64_t i = 0; i < t.size; ++i)
        FUZZ_CHECK(std::isfinite(loaded[static_cast<std::size_t>(t.offset + i)]),
                   "int8 tensor '" + t.name + "' holds a value that is not finite");
    }
    const std::string again = attn::fuzz::write_scratch_file("again.safetensors", "");
    model.save_parameters(again);
    attn::Transformer reloaded(config, attn::cpu_backend(), attn::WeightFormat::int8);
    reloaded.load_parameters(again);
    FUZZ_CHECK(same_bits(reloaded.parameters_to_host(), loaded), "an int8 model saved and loaded again differs");
  } catch (const attn::Error&) {
  }
  try {
    attn::Transformer model(config, attn::cpu_backend(), attn::WeightFormat::f32);
    model.load_parameters(path);
  } catch (const attn::Error&) {
  }
  return 0;
}
