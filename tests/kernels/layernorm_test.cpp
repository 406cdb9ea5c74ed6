// Layer normalisation: a hand-worked row, and gradients against finite differences of a
// double-precision reference.
#include <cmath>

#include <gtest/gtest.h>

#include "common/backends.h"
#include "common/device_vector.h"
#include "common/finite_difference.h"

namespace attn {
namespace {

using testing::random_values;

class LayerNormTest : public ::testing::TestWithParam<Backend*> {};

constexpr float kEps = 1e-5f;

TEST_P(LayerNormTest, HandWorkedRow) {
  Backend& be = *GetParam();
  // x = [1 2 3 4]: mean 2.5, variance 1.25, rstd = 1/sqrt(1.25 + 1e-5) = 0.894423613...
  auto x = testing::to_device(be, std::vector<float>{1, 2, 3, 4});
  auto gamma = testing::to_device(be, std::vector<float>{1, 2, 1, 1});
  auto beta = testing::to_device(be, std::vector<float>{0, 0, 0, 10});
  DeviceBuffer<float> y(be, 4), mean(be, 1), rstd(be, 1);
  be.layernorm(x.data(), nullptr, gamma.data(), beta.data(), nullptr, y.data(), nullptr, mean.data(), rstd.data(), 1, 4,
               kEps);
  const double rs = 1 / std::sqrt(1.25 + 1e-5);
  auto got = testing::to_host(be, y);
  EXPECT_NEAR(got[0], -1.5 * rs, 1e-6);
  EXPECT_NEAR(got[1], 2 * -0.5 * rs, 1e-6);
  EXPECT_NEAR(got[2], 0.5 * rs, 1e-6);
  EXPECT_NEAR(got[3], 1.5 * rs + 10, 1e-5);
  EXPECT_NEAR(testing::to_host(be, mean)[0], 2.5, 1e-7);
  EXPECT_NEAR(testing::to_host(be, rstd)[0], rs, 1e-6);
}

TEST_P(LayerNormTest, GradientsMatchFiniteDifferences) {
  Backend& be = *GetParam();
  const int rows = 3, cols = 6;
  auto x = random_values(rows * cols, 21, -2, 2);
  auto gamma = random_values(cols, 22, 0.5, 1.5);
  auto beta = random_values(cols, 23);
  auto w = random_values(rows * cols, 24);  // L = Σ w · y
  // Reference forward over (x, gamma, beta) packed into one vector.
  auto loss = [&](const std::vector<double>& v) {
    const double* xv = v.data();
    const double* g = xv + rows * cols;
    const double* b = g + cols;
    double total = 0;
    for (int r = 0; r < rows; ++r) {
      double mu = 0, var = 0;
      for (int c = 0; c < cols; ++c) mu += xv[r * cols + c] / cols;
      for (int c = 0; c < cols; ++c) var += (xv[r * cols + c] - mu) * (xv[r * cols + c] - mu) / cols;
      for (int c = 0; c < cols; ++c)
        total += w[r * cols + c] * ((xv[r * cols + c] - mu) / std::sqrt(var + kEps) * g[c] + b[c]);
    }
    return total;
  };
  std::vector<double> packed = testing::to_double(x);
  packed.insert(packed.end(), gamma.begin(), gamma.end());
  packed.insert(packed.end(), beta.begin(), beta.end());
  auto expected = testing::numerical_gradient(loss, packed);

  auto dx_ = testing::to_device(be, x), dg = testing::to_device(be, gamma), db = testing::to_device(be, beta);
  DeviceBuffer<float> y(be, rows * cols), mean(be, rows), rstd(be, rows), dx(be, rows * cols);
  be.layernorm(dx_.data(), nullptr, dg.data(), db.data(), nullptr, y.data(), nullptr, mean.data(), rstd.data(), rows,
               cols, kEps);
  auto dy = testing::to_device(be, w);
  // dgamma/dbeta accumulate: start from 1 to check they add rather than overwrite.
  auto dgamma = testing::to_device(be, std::vector<float>(cols, 1.0f));
  auto dbeta = testing::to_device(be, std::vector<float>(cols, 1.0f));
  be.layernorm_backward(dy.data(), dx_.data(), mean.data(), rstd.data(), dg.data(), dx.data(), {}, dgamma.data(),
                        dbeta.data(), rows, cols);
  auto gx = testing::to_host(be, dx), gg = testing::to_host(be, dgamma), gb = testing::to_host(be, dbeta);
  for (int i = 0; i < rows * cols; ++i) EXPECT_NEAR(gx[i], expected[i], 2e-5) << "dx " << i;
  for (int c = 0; c < cols; ++c) {
    EXPECT_NEAR(gg[c] - 1, expected[rows * cols + c], 2e-5) << "dgamma " << c;
    EXPECT_NEAR(gb[c] - 1, expected[rows * cols + cols + c], 2e-5) << "dbeta " << c;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, LayerNormTest, ::testing::ValuesIn(testing::all_backends()), testing::backend_name);

}  // namespace
}  // namespace attn
