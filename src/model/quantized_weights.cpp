#include "model/quantized_weights.h"

#include <cmath>

#include "core/error.h"

namespace attn {

bool is_quantized_tensor(const ParameterInfo& t) {
  return t.shape.size() == 2 && t.name != "encoder.positions.weight" && t.name != "decoder.positions.weight";
}

std::string scale_tensor_name(const std::string& name) { return name + "_scale"; }

QuantizedWeights::QuantizedWeights(const ParameterLayout& layout, Backend& backend) : backend_(&backend) {
  std::int64_t data = 0, row = 0;
  for (const auto& t : layout.tensors()) {
    if (!is_quantized_tensor(t)) continue;
    slots_[t.name] = {data, row, t.shape[0], t.shape[1]};
    data += t.size, row += t.shape[0];
  }
  data_.resize(backend, static_cast<std::size_t>(data));
  scales_.resize(backend, static_cast<std::size_t>(row));
  sums_.resize(backend, static_cast<std::size_t>(row));
  const std::vector<std::int8_t> zeros(static_cast<std::size_t>(data), 0);
  const std::vector<std::int32_t> no_sums(static_cast<std::size_t>(row), 0);
  backend.copy_to_device(data_.data(), zeros.data(), zeros.size());
  backend.fill(scales_.data(), row, 1.0f);
  backend.copy_to_device(sums_.data(), no_sums.data(), no_sums.size() * sizeof(std::int32_t));
}

const QuantizedWeights::Slot& QuantizedWeights::slot(const std::string& name) const {
  const auto it = slots_.find(name);
  if (it == slots_.end()) throw Error("tensor '" + name + "' is not stored in int8");
  return it->second;
}

MatrixRef QuantizedWeights::matrix(const std::string& name, Trans trans) const {
  const Slot& s = slot(name);
  return s8_matrix(data_.data() + s.data, scales_.data() + s.row, sums_.data() + s.row, s.cols, trans);
}

void QuantizedWeights::quantize(const std::string& name, const float* host) {
  const Slot& s = slot(name);
  DeviceBuffer<float> rows(*backend_, static_cast<std::size_t>(s.rows * s.cols));
  backend_->copy_to_device(rows.data(), host, static_cast<std::size_t>(s.rows * s.cols) * sizeof(float));
  backend_->quantize_rows(rows.data(), s.rows, static_cast<int>(s.cols), s.cols, data_.data() + s.data,
                          scales_.data() + s.row, sums_.data() + s.row);
}

void QuantizedWeights::check(const std::string& name, const std::int8_t* q, const float* scale, std::int64_t rows,
                             std::int64_t cols, const std::string& source) {
  for (std::int64_t r = 0; r < rows; ++r) {
    if (!(std::isfinite(scale[r]) && scale[r] > 0))
      throw_in(source, "tensor '" + scale_tensor_name(name) + "' row " + std::to_string(r) +
                           ": a scale must be a finite positive float, not " + std::to_string(scale[r]));
    for (std::int64_t c = 0; c < cols; ++c)
      if (q[r * cols + c] == -128)
        throw_in(source, "tensor '" + name + "' row " + std::to_string(r) + " column " + std::to_string(c) +
                             ": -128 is outside the int8 weights' range ±127");
  }
}

void QuantizedWeights::set(const std::string& name, const std::int8_t* q, const float* scale,
                           const std::string& source) {
  const Slot& s = slot(name);
  check(name, q, scale, s.rows, s.cols, source);
  std::vector<std::int32_t> sums(static_cast<std::size_t>(s.rows), 0);
  for (std::int64_t i = 0; i < s.rows * s.cols; ++i) sums[static_cast<std::size_t>(i / s.cols)] += q[i];
  backend_->copy_to_device(data_.data() + s.data, q, static_cast<std::size_t>(s.rows * s.cols));
  backend_->copy_to_device(scales_.data() + s.row, scale, static_cast<std::size_t>(s.rows) * sizeof(float));
  backend_->copy_to_device(sums_.data() + s.row, sums.data(), sums.size() * sizeof(std::int32_t));
}

void QuantizedWeights::get(const std::string& name, std::vector<std::int8_t>& q, std::vector<float>& scale) const {
  const Slot& s = slot(name);
  q.resize(static_cast<std::size_t>(s.rows * s.cols));
  scale.resize(static_cast<std::size_t>(s.rows));
  backend_->copy_to_host(q.data(), data_.data() + s.data, q.size());
  backend_->copy_to_host(scale.data(), scales_.data() + s.row, scale.size() * sizeof(float));
}

}  // namespace attn
