#pragma once
// How a new model's parameters start (documented in docs/model-format.md):
//   linear weights   Xavier/Glorot uniform, U(-a, a) with a = sqrt(6 / (fan_in + fan_out))
//   biases           0
//   layer norms      gain 1, bias 0
//   embedding        N(0, d_model^-1/2), so that E[id]·√d_model has unit variance; the padding
//                    row is 0 (fairseq's choice); learned positions likewise N(0, d_model^-1/2).
#include <cstdint>
#include <vector>

#include "model/parameter_layout.h"

namespace attn {

// Fills `host` (layout.total() floats) with a fresh initialisation drawn from `seed`.
void initialize_parameters(const ParameterLayout& layout, const ModelConfig& config, std::uint64_t seed,
                           std::vector<float>& host);

}  // namespace attn
