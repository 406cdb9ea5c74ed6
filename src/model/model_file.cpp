// model.safetensors for a Transformer (docs/model-format.md): Transformer::save_parameters and
// Transformer::load_parameters, apart from the model's arithmetic in transformer.cpp.
#include <cstring>
#include <set>

#include "core/error.h"
#include "core/sha256.h"
#include "model/safetensors.h"
#include "model/transformer.h"

namespace attn {

void Transformer::save_parameters(const std::filesystem::path& path,
                                  const std::map<std::string, std::string>& metadata) const {
  // Host copies of what is written, in the file's order: float tensors, or for an int8 model's
  // matrices the int8 rows followed by their scales.
  struct Part {
    std::string name, dtype;
    std::vector<std::int64_t> shape;
    std::vector<char> bytes;
  };
  std::vector<Part> parts;
  for (const auto& t : layout_.tensors()) {
    if (weights_ == WeightFormat::int8 && quantized_->contains(t.name)) {
      std::vector<std::int8_t> q;
      std::vector<float> scale;
      quantized_->get(t.name, q, scale);
      parts.push_back({t.name, "I8", t.shape, std::vector<char>(q.begin(), q.end())});
      Part s{scale_tensor_name(t.name), "F32", {t.shape[0]}, std::vector<char>(scale.size() * sizeof(float))};
      std::memcpy(s.bytes.data(), scale.data(), s.bytes.size());
      parts.push_back(std::move(s));
      continue;
    }
    Part f{t.name, "F32", t.shape, std::vector<char>(static_cast<std::size_t>(t.size) * sizeof(float))};
    backend_->copy_to_host(f.bytes.data(), float_tensor(t.name), f.bytes.size());
    parts.push_back(std::move(f));
  }
  std::vector<TensorToWrite> tensors;
  // A checksum of the data section as it will be written (the tensors in order), as checkpoints
  // have: a flipped bit is found on load instead of translating with it.
  Sha256 hash;
  for (const auto& p : parts) {
    tensors.push_back({p.name, p.shape, p.bytes.data(), p.dtype});
    hash.update(p.bytes.data(), p.bytes.size());
  }
  auto meta = metadata;
  meta.emplace("format", "attn");
  meta["attn.weights"] = weights_ == WeightFormat::int8 ? "int8" : "float32";
  meta["attn.sha256"] = to_hex(hash.finish());
  write_safetensors(path, tensors, meta);
}

namespace {

// How one tensor travels from the file into the model: the four cases of a float32 or int8 file
// into a float32 or int8 model (a tensor that is never quantized, such as a bias or layer norm,
// is always float to float).
enum class TensorLoad {
  float_to_float,  // read into the float buffer
  float_to_int8,   // read as float, quantized into the int8 model
  int8_to_int8,    // rows and scales taken as they are
  int8_to_float,   // rows times their scales, into the float buffer
};

TensorLoad tensor_load(bool int8_in_file, bool int8_in_model) {
  if (int8_in_file) return int8_in_model ? TensorLoad::int8_to_int8 : TensorLoad::int8_to_float;
  return int8_in_model ? TensorLoad::float_to_int8 : TensorLoad::float_to_float;
}

}  // namespace

void Transformer::load_parameters(const std::filesystem::path& path) {
  const SafetensorsFile file(path);
  // Files written by attn carry a checksum; files from elsewhere (PyTorch exports) may not.
  if (const auto it = file.metadata().find("attn.sha256");
      it != file.metadata().end() && sha256_hex(file.data()) != it->second)
    throw_in(path.string(), "corrupted model file: the data does not match its SHA-256 checksum (attn.sha256)");
  std::set<std::string> expected;
  // A float32 model takes every tensor into one host copy, uploaded once at the end; an int8 model
  // places each tensor as it is read.
  const bool float_model = weights_ == WeightFormat::f32;
  std::vector<float> host(float_model ? static_cast<std::size_t>(layout_.total()) : 0);
  std::vector<float> values, scale;
  std::vector<std::int8_t> q;
  const auto read_int8 = [&](const ParameterInfo& t) {
    expected.insert(scale_tensor_name(t.name));
    q.resize(static_cast<std::size_t>(t.size));
    scale.resize(static_cast<std::size_t>(t.shape[0]));
    file.read(t.name, t.shape, q.data());
    file.read(scale_tensor_name(t.name), {t.shape[0]}, scale.data());
  };
  // Float values of tensor t (read or dequantized) go to the host copy or, in an int8 model, to the
  // device or the quantizer.
  const auto float_destination = [&](const ParameterInfo& t) {
    if (float_model) return host.data() + t.offset;
    values.resize(static_cast<std::size_t>(t.size));
    return values.data();
  };
  const auto place_float = [&](const ParameterInfo& t, const float* v, bool quantize) {
    if (float_model) return;  // already in host
    if (quantize)
      quantized_->quantize(t.name, v);
    else
      backend_->copy_to_device(float_tensor(t.name), v, static_cast<std::size_t>(t.size) * sizeof(float));
  };
  for (const auto& t : layout_.tensors()) {
    expected.insert(t.name);
    const bool int8_in_file = is_quantized_tensor(t) && file.contains(t.name) && file.dtype(t.name) == "I8";
    const bool int8_in_model = weights_ == WeightFormat::int8 && quantized_->contains(t.name);
    switch (tensor_load(int8_in_file, int8_in_model)) {
      case TensorLoad::float_to_float:
      case TensorLoad::float_to_int8: {
        float* dst = float_destination(t);
        file.read(t.name, t.shape, dst);
        place_float(t, dst, int8_in_model);
        break;
      }
      case TensorLoad::int8_to_int8:
        read_int8(t);
        quantized_->set(t.name, q.data(), scale.data(), path.string());
        break;
      case TensorLoad::int8_to_float: {
        read_int8(t);
        QuantizedWeights::check(t.name, q.data(), scale.data(), t.shape[0], t.shape[1], path.string());
        float* dst = float_destination(t);
        for (std::int64_t i = 0; i < t.size; ++i) dst[i] = scale[static_cast<std::size_t>(i / t.shape[1])] * q[i];
        place_float(t, dst, false);
        break;
      }
    }
  }
  for (const auto& [name, entry] : file.entries())
    if (!expected.count(name))
      throw_in(path.string(), "tensor '" + name + "' is not part of this model's configuration");
  if (float_model) set_parameters(host);
}

}  // namespace attn
