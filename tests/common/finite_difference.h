#pragma once
// Central finite differences of a scalar function of a vector, in double precision.
#include <functional>
#include <vector>

namespace attn::testing {

inline std::vector<double> numerical_gradient(const std::function<double(const std::vector<double>&)>& f,
                                              std::vector<double> x, double h = 1e-6) {
  std::vector<double> g(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double saved = x[i];
    x[i] = saved + h;
    const double up = f(x);
    x[i] = saved - h;
    const double down = f(x);
    x[i] = saved;
    g[i] = (up - down) / (2 * h);
  }
  return g;
}

inline std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

}  // namespace attn::testing
