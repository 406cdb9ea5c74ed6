// Rows kept in an explicit element type (nn::RowBuffer, nn::keep) and a linear layer's backward
// pass reading its gradient in the type asked: against hand-worked bfloat16 roundings and a
// double-precision reference of ∂W = dyᵀ·x, ∂b = Σ dy, ∂x = dy·W.
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "common/bf16_rounding.h"
#include "common/device_vector.h"
#include "core/error.h"
#include "kernels/cpu/ops.h"
#include "nn/feed_forward.h"
#include "nn/linear.h"

namespace attn {
namespace {

using testing::bf16_round;
using testing::to_device;
using testing::to_host;

TEST(RowBuffer, KeepsBf16RowsRoundedOnceToNearestEven) {
  Backend& be = cpu_backend();
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7 (bfloat16 keeps 7 fraction bits): to even, 1;
  // 1 + 3·2^-8 lies halfway between 1 + 2^-7 and 1 + 2^-6: to even, 1 + 2^-6.
  const std::vector<float> x{1.0f, 1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, -2.5f};
  const std::vector<Bf16> expected{Bf16{0x3F80}, Bf16{0x3F80}, Bf16{0x3F82}, Bf16{0xC020}};
  const DeviceBuffer<float> rows = to_device(be, x);
  DeviceBuffer<Bf16> kept(be, x.size());
  const nn::Activations read = nn::keep(be, rows.data(), 4, nn::RowBuffer(kept.data()));
  EXPECT_EQ(read.dtype, DType::bf16);
  EXPECT_EQ(read.data, kept.data());
  EXPECT_EQ(to_host(be, kept), expected);
}

TEST(RowBuffer, KeepsFloatRowsAsTheProductWroteThem) {
  Backend& be = cpu_backend();
  DeviceBuffer<float> rows = to_device(be, std::vector<float>{0.1f, -3.0f});
  const nn::Activations read = nn::keep(be, rows.data(), 2, nn::RowBuffer(rows.data()));
  EXPECT_EQ(read.dtype, DType::f32);
  EXPECT_EQ(read.data, rows.data());
  // A float buffer other than the product's output would be a copy no pass makes: refused.
  DeviceBuffer<float> other(be, 2);
  EXPECT_THROW(nn::keep(be, rows.data(), 2, nn::RowBuffer(other.data())), Error);
}

// A layer of 3 inputs and 2 outputs over 2 rows. x and W are exact in bfloat16, so that a product
// reading them in either type multiplies the same numbers; dy is not (1 + 2^-10 rounds to 1).
struct LinearCase {
  std::vector<float> x{0.5f, -1.0f, 2.0f, 1.5f, 0.25f, -0.75f};  // [2, 3]
  std::vector<float> w{1.0f, 2.0f, -0.5f, 0.125f, -3.0f, 4.0f};  // [2, 3]
  std::vector<float> b{0.0f, 0.0f};
  std::vector<float> dy{1.0f + 0x1p-10f, -2.0f - 0x1p-9f, 0.3f, 7.0f / 3.0f};  // [2, 2]

  struct Gradients {
    std::vector<double> w, b, x;
  };
  // The reference, reading dy as `read` turns each element into a double.
  template <typename Read>
  Gradients reference(Read read) const {
    Gradients g{std::vector<double>(6, 0.0), std::vector<double>(2, 0.0), std::vector<double>(6, 0.0)};
    for (int r = 0; r < 2; ++r)
      for (int o = 0; o < 2; ++o) {
        const double d = read(dy[r * 2 + o]);
        g.b[o] += dy[r * 2 + o];  // the bias sums the float rows, whatever the products read
        for (int i = 0; i < 3; ++i) {
          g.w[o * 3 + i] += d * x[r * 3 + i];
          g.x[r * 3 + i] += d * w[o * 3 + i];
        }
      }
    return g;
  }
};

void run_backward(Backend& be, const LinearCase& c, bool read_in_bf16, std::vector<float>& dw, std::vector<float>& db,
                  std::vector<float>& dx) {
  const DeviceBuffer<float> x = to_device(be, c.x), w = to_device(be, c.w), b = to_device(be, c.b),
                            dy = to_device(be, c.dy);
  DeviceBuffer<float> wg = to_device(be, std::vector<float>(6, 0.0f)), bg = to_device(be, std::vector<float>(2, 0.0f)),
                      xg(be, 6);
  DeviceBuffer<Bf16> scratch(be, 4);
  const nn::Linear layer{f32_matrix(w.data(), 3), b.data(), wg.data(), bg.data(), 3, 2};
  layer.backward(be, x.data(), dy.data(), 2, xg.data(), /*accumulate_dx=*/false,
                 read_in_bf16 ? nn::RowBuffer(scratch.data()) : nn::RowBuffer());
  dw = to_host(be, wg), db = to_host(be, bg), dx = to_host(be, xg);
}

void expect_near(const std::vector<float>& got, const std::vector<double>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-6 * (1 + std::abs(want[i]))) << what << "[" << i << "]";
}

TEST(Linear, BackwardReadsAFloatGradientRoundedToBf16OnlyWhereAsked) {
  Backend& be = cpu_backend();
  const LinearCase c;
  std::vector<float> dw, db, dx;

  run_backward(be, c, /*read_in_bf16=*/false, dw, db, dx);
  const LinearCase::Gradients exact = c.reference([](float v) { return static_cast<double>(v); });
  expect_near(dw, exact.w, "dW (float dy)");
  expect_near(db, exact.b, "db (float dy)");
  expect_near(dx, exact.x, "dx (float dy)");

  run_backward(be, c, /*read_in_bf16=*/true, dw, db, dx);
  const LinearCase::Gradients rounded = c.reference([](float v) { return bf16_round(v); });
  expect_near(dw, rounded.w, "dW (dy read in bf16)");
  expect_near(db, rounded.b, "db (dy read in bf16)");
  expect_near(dx, rounded.x, "dx (dy read in bf16)");
  // The two readings differ by more than the bound: the test tells them apart.
  EXPECT_GT(std::abs(rounded.w[0] - exact.w[0]), 1e-4);
}

// A feed-forward layer of d_model 3 and d_ff 2 over 2 rows, x, W1 and W2 exact in bfloat16, the
// biases 0. Hidden pre-activations: row 0 (-2.5, 11.0625), row 1 (2.375, -3.5625): ReLU lets
// through (0, 1) and (1, 0). ∂L/∂h, worked by hand from dy read in bf16 (0.3 -> 0.30078125,
// 7/3 -> 2.328125): row 0 (-1.25, -3), row 1 (-2.52734375, -3.01953125); masked, (0, -3) and
// (-2.52734375, 0), which W1's products read rounded to bf16 (-2.52734375 -> -2.53125).
struct FeedForwardCase {
  std::vector<float> x{0.5f, -1.0f, 2.0f, 1.5f, 0.25f, -0.75f};                   // [2, 3]
  std::vector<float> w1{1.0f, 2.0f, -0.5f, 0.125f, -3.0f, 4.0f};                  // [2, 3]
  std::vector<float> w2{1.0f, -2.0f, 0.5f, 3.0f, -1.0f, 0.25f};                   // [3, 2]
  std::vector<float> dy{1.0f + 0x1p-10f, -0.5f, 2.0f, 0.3f, -1.0f, 7.0f / 3.0f};  // [2, 3]
};

struct FeedForwardGradients {
  std::vector<float> w1, b1, x;
};

FeedForwardGradients feed_forward_backward(Backend& be, const FeedForwardCase& c, bool bf16, float dropout) {
  const DeviceBuffer<float> x = to_device(be, c.x), w1 = to_device(be, c.w1), w2 = to_device(be, c.w2),
                            dy = to_device(be, c.dy), zeros3 = to_device(be, std::vector<float>(3, 0.0f));
  DeviceBuffer<float> b1 = to_device(be, std::vector<float>(2, 0.0f)), w1g = to_device(be, std::vector<float>(6, 0.0f)),
                      b1g = to_device(be, std::vector<float>(2, 0.0f)),
                      w2g = to_device(be, std::vector<float>(6, 0.0f)),
                      b2g = to_device(be, std::vector<float>(3, 0.0f)), xg = to_device(be, std::vector<float>(6, 0.0f)),
                      hidden(be, 4), d_hidden(be, 4), y(be, 6);
  DeviceBuffer<Bf16> kept(be, 4), scratch(be, 6);
  const nn::FeedForward ff{nn::Linear{f32_matrix(w1.data(), 3), b1.data(), w1g.data(), b1g.data(), 3, 2},
                           nn::Linear{f32_matrix(w2.data(), 2), zeros3.data(), w2g.data(), b2g.data(), 2, 3}};
  const nn::FeedForward::Hidden h{hidden.data(), bf16 ? nn::RowBuffer(kept.data()) : nn::RowBuffer(hidden.data())};
  const nn::HiddenDropout drop{dropout, 7};
  ff.forward(be, x.data(), 2, h, y.data(), drop);
  ff.backward(be, x.data(), 2, h, dy.data(), d_hidden.data(), xg.data(),
              bf16 ? nn::RowBuffer(scratch.data()) : nn::RowBuffer(), drop);
  return {to_host(be, w1g), to_host(be, b1g), to_host(be, xg)};
}

// ∂W1, ∂b1 and ∂x from ∂L/∂h masked (dh), the products reading dh as `read` turns it into a double.
template <typename Read>
void expect_first_layer(const FeedForwardCase& c, const FeedForwardGradients& got, const double (&dh)[2][2], Read read,
                        const char* what) {
  for (int j = 0; j < 2; ++j) {
    EXPECT_NEAR(got.b1[j], dh[0][j] + dh[1][j], 1e-6) << what << ": db1[" << j << "]";
    for (int i = 0; i < 3; ++i) {
      const double dw = read(dh[0][j]) * c.x[i] + read(dh[1][j]) * c.x[3 + i];
      EXPECT_NEAR(got.w1[j * 3 + i], dw, 1e-6 * (1 + std::abs(dw))) << what << ": dW1[" << j << "][" << i << "]";
    }
  }
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < 3; ++i) {
      const double dx = read(dh[r][0]) * c.w1[i] + read(dh[r][1]) * c.w1[3 + i];
      EXPECT_NEAR(got.x[r * 3 + i], dx, 1e-6 * (1 + std::abs(dx))) << what << ": dx[" << r << "][" << i << "]";
    }
}

TEST(FeedForward, BackwardMasksTheHiddenGradientByReluOnThePassThatRoundsIt) {
  Backend& be = cpu_backend();
  const FeedForwardCase c;
  // bf16 (the mask folded into the rounding pass): dh from dy read in bf16, masked, read in bf16.
  const double masked_bf16[2][2] = {{0.0, -3.0}, {-2.52734375, 0.0}};
  expect_first_layer(
      c, feed_forward_backward(be, c, /*bf16=*/true, 0.0f), masked_bf16,
      [](double v) { return bf16_round(static_cast<float>(v)); }, "bf16");
  // float (relu_backward on its own): dh from dy as it is.
  double masked_f32[2][2] = {};
  for (int r = 0; r < 2; ++r)
    for (int j = 0; j < 2; ++j) {
      double sum = 0;
      for (int o = 0; o < 3; ++o) sum += static_cast<double>(c.dy[r * 3 + o]) * c.w2[o * 2 + j];
      masked_f32[r][j] = (r == 0 && j == 1) || (r == 1 && j == 0) ? sum : 0.0;
    }
  expect_first_layer(
      c, feed_forward_backward(be, c, /*bf16=*/false, 0.0f), masked_f32, [](double v) { return v; }, "f32");
}

TEST(Linear, ReluFoldsIntoTheBackwardOnlyWhereItsGradientIsRoundedToBf16) {
  Backend& be = cpu_backend();
  const LinearCase c;
  const DeviceBuffer<float> x = to_device(be, c.x), w = to_device(be, c.w), b = to_device(be, c.b),
                            dy = to_device(be, c.dy);
  DeviceBuffer<float> wg(be, 6), bg(be, 2), xg(be, 6);
  DeviceBuffer<Bf16> relu_y(be, 4);
  const nn::Linear layer{f32_matrix(w.data(), 3), b.data(), wg.data(), bg.data(), 3, 2};
  EXPECT_THROW(layer.backward(be, x.data(), dy.data(), 2, xg.data(), false, nn::RowBuffer(), relu_y.data()), Error);
}

}  // namespace
}  // namespace attn
