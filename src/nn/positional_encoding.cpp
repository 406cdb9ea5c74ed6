#include "nn/positional_encoding.h"

#include <cmath>

namespace attn::nn {

std::vector<float> sinusoidal_positions(int positions, int dim) {
  std::vector<float> table(static_cast<std::size_t>(positions) * dim);
  for (int pos = 0; pos < positions; ++pos)
    for (int i = 0; i < dim; ++i) {
      const double angle = pos / std::pow(10000.0, (i - i % 2) / static_cast<double>(dim));
      table[static_cast<std::size_t>(pos) * dim + i] =
          static_cast<float>(i % 2 == 0 ? std::sin(angle) : std::cos(angle));
    }
  return table;
}

}  // namespace attn::nn
