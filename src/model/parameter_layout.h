#pragma once
// Where each named parameter tensor lives in the model's one parameter buffer. The order is the
// safetensors file's order, and the names are documented in docs/model-format.md.
#include <cstdint>
#include <string>
#include <vector>

#include "model/model_config.h"

namespace attn {

enum class InitKind { Zeros, Ones, XavierUniform, EmbeddingNormal };

struct ParameterInfo {
  std::string name;
  std::vector<std::int64_t> shape;
  std::int64_t offset = 0;  // in floats from the start of the buffer
  std::int64_t size = 0;    // in floats
  InitKind init = InitKind::Zeros;
  // For Xavier: the fan-in and fan-out of the matrix it belongs to (fused q/k/v are separate
  // matrices, each [h·d_k, d_model]).
  std::int64_t fan_in = 0, fan_out = 0;
};

class ParameterLayout {
 public:
  explicit ParameterLayout(const ModelConfig& config);

  const std::vector<ParameterInfo>& tensors() const { return tensors_; }
  std::int64_t total() const { return total_; }
  // Throws Error if there is no such tensor.
  const ParameterInfo& find(const std::string& name) const;

 private:
  void add(const std::string& name, std::vector<std::int64_t> shape, InitKind init, std::int64_t fan_in = 0,
           std::int64_t fan_out = 0);
  void add_linear(const std::string& prefix, std::int64_t out, std::int64_t in);
  void add_norm(const std::string& prefix, std::int64_t dim);

  std::vector<ParameterInfo> tensors_;
  std::int64_t total_ = 0;
};

}  // namespace attn
