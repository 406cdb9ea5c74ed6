// libFuzzer target: the safetensors reader (model/safetensors.h), which `attn translate`, `attn
// average` and training's resume use on model files a user hands them. The input is the file.
//
// A reader that accepts a file must then copy out every F32 tensor whose shape fits its byte range,
// as loading a model does with the shapes the model expects; a model never asks for a negative or
// overflowing shape, so those tensors are only checked to be refused by read()'s shape comparison.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "fuzz_support.h"
#include "model/safetensors.h"

namespace {

// The byte count of an F32 tensor of this shape, or nullopt if a dimension is negative or the
// count overflows.
std::optional<std::size_t> f32_bytes(const std::vector<std::int64_t>& shape) {
  std::size_t n = sizeof(float);
  for (const std::int64_t d : shape) {
    if (d < 0) return std::nullopt;
    if (d != 0 && n > std::numeric_limits<std::size_t>::max() / static_cast<std::size_t>(d)) return std::nullopt;
    n *= static_cast<std::size_t>(d);
  }
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path =
      attn::fuzz::write_scratch_file("model.safetensors", {reinterpret_cast<const char*>(data), size});
  try {
    const attn::SafetensorsFile file(path);
    for (const auto& [name, entry] : file.entries()) {
      FUZZ_CHECK(entry.begin <= entry.end && entry.end <= file.data().size(), "tensor '" + name + "' outside the data");
      const auto bytes = f32_bytes(entry.shape);
      if (entry.dtype != "F32" || !bytes || *bytes != entry.end - entry.begin) {
        try {
          // What a model would ask for instead: the same name, a shape of one float.
          float one = 0;
          file.read(name, {1}, &one);
          FUZZ_CHECK(false, "read() accepted tensor '" + name + "', which does not fit its byte range, as one float");
        } catch (const attn::Error&) {
        }
        continue;
      }
      std::vector<float> values(*bytes / sizeof(float));
      file.read(name, entry.shape, values.data());
    }
  } catch (const attn::Error&) {
    // Bad input, refused with a message: what the reader should do.
  }
  return 0;
}
