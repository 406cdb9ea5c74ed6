#pragma once
// The paper's sinusoidal positional encoding (section 3.5):
//   PE(pos, 2i) = sin(pos / 10000^(2i/d_model)),  PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)).
#include <vector>

namespace attn::nn {

// [positions, dim] row-major, computed in double and rounded once.
std::vector<float> sinusoidal_positions(int positions, int dim);

}  // namespace attn::nn
