#pragma once
// The int8 side of a model (docs/model-format.md, "int8 models"): every matrix a product reads —
// the linear layers' weights and the shared embedding — kept as signed 8-bit rows with one float
// scale per row (W[r, :] ≈ scale[r] · q[r, :], |q| ≤ 127), plus each row's sum of q, which the
// int8 product needs. One allocation per element type; rows of tensors that the layout keeps
// adjacent (fused q/k/v) stay adjacent, so a fused product reads them as one matrix.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernels/backend.h"
#include "kernels/device_buffer.h"
#include "model/parameter_layout.h"

namespace attn {

// How a model keeps its weights: all float32, or the matrices in int8 (inference only).
enum class WeightFormat { f32, int8 };

// Whether an int8 model stores this tensor as int8: the 2-D tensors except learned positions
// (added to the embeddings, never multiplied).
bool is_quantized_tensor(const ParameterInfo& tensor);
// The name of a quantized tensor's scales in a model file: "X.weight" -> "X.weight_scale".
std::string scale_tensor_name(const std::string& name);

class QuantizedWeights {
 public:
  // Zero weights with scale 1 for every quantized tensor of the layout.
  QuantizedWeights(const ParameterLayout& layout, Backend& backend);

  struct Slot {
    std::int64_t data = 0;  // first element in data()
    std::int64_t row = 0;   // first row in scales() and row_sums()
    std::int64_t rows = 0, cols = 0;
  };
  bool contains(const std::string& name) const { return slots_.count(name) != 0; }
  const Slot& slot(const std::string& name) const;  // throws Error if not quantized

  // The tensor (with the rows that follow it, for fused products) as a product's operand.
  MatrixRef matrix(const std::string& name, Trans trans) const;

  // Quantizes float rows (host memory, [rows, cols]) into the tensor's slot on the backend.
  void quantize(const std::string& name, const float* host);
  // Stores already quantized rows (host memory): q [rows, cols] and scale [rows]. Throws Error
  // (naming `source` and the tensor) for a q of -128 or a scale that is not finite and positive.
  void set(const std::string& name, const std::int8_t* q, const float* scale, const std::string& source);
  // The checks of set, without storing: rows × cols values q and rows scales.
  static void check(const std::string& name, const std::int8_t* q, const float* scale, std::int64_t rows,
                    std::int64_t cols, const std::string& source);
  // Host copies of a tensor's q and scales.
  void get(const std::string& name, std::vector<std::int8_t>& q, std::vector<float>& scale) const;

 private:
  Backend* backend_;
  std::unordered_map<std::string, Slot> slots_;
  DeviceBuffer<std::int8_t> data_;
  DeviceBuffer<float> scales_;
  DeviceBuffer<std::int32_t> sums_;
};

}  // namespace attn
