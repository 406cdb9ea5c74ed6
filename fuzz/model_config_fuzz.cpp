// libFuzzer target: the model config (model/model_config.h), read from a config.json as `attn
// train --config` and every command that loads a model directory do. The input is the file.
//
// load_model_config parses and validates; it never allocates a model, so absurd sizes cost nothing
// here (validate() refuses what would not fit in memory by counting). A config it accepts must
// survive the round trip through the JSON that save_model_config writes.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "fuzz_support.h"
#include "model/model_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = attn::fuzz::write_scratch_file("config.json", {reinterpret_cast<const char*>(data), size});
  attn::ModelConfig config;
  try {
    config = attn::load_model_config(path);
  } catch (const attn::Error&) {
    return 0;  // bad input, refused with a message
  }
  const std::string saved = nlohmann::json(config).dump(2);
  attn::ModelConfig again;
  try {
    again = nlohmann::json::parse(saved).get<attn::ModelConfig>();
  } catch (const attn::Error& e) {
    FUZZ_CHECK(false, std::string("the saved config is refused: ") + e.what() + "\n" + saved);
  }
  FUZZ_CHECK(nlohmann::json(again).dump(2) == saved, "the saved config reads back differently:\n" + saved);
  return 0;
}
