// Label-smoothed cross-entropy: a hand-worked value, PyTorch's definition computed in double, and
// the gradient against finite differences.
#include <cmath>

#include <gtest/gtest.h>

#include "common/backends.h"
#include "common/device_vector.h"
#include "common/finite_difference.h"

namespace attn {
namespace {

using testing::random_values;

class CrossEntropyTest : public ::testing::TestWithParam<Backend*> {};

// torch.nn.functional.cross_entropy(logits, targets, label_smoothing=eps, ignore_index=ignore,
// reduction='sum'): Σ_rows [(1-eps)·(-log p_y) + eps/V · Σ_j (-log p_j)].
double reference_loss(const std::vector<double>& logits, const std::vector<std::int32_t>& targets, int vocab,
                      double eps, int ignore) {
  double total = 0;
  for (std::size_t r = 0; r < targets.size(); ++r) {
    if (targets[r] == ignore) continue;
    const double* x = &logits[r * vocab];
    double m = x[0];
    for (int j = 1; j < vocab; ++j) m = std::max(m, x[j]);
    double s = 0;
    for (int j = 0; j < vocab; ++j) s += std::exp(x[j] - m);
    const double lse = m + std::log(s);
    double smooth = 0;
    for (int j = 0; j < vocab; ++j) smooth += lse - x[j];
    total += (1 - eps) * (lse - x[targets[r]]) + eps / vocab * smooth;
  }
  return total;
}

TEST_P(CrossEntropyTest, HandWorkedValue) {
  Backend& be = *GetParam();
  // logits log([1, 2, 1]) → p = [0.25, 0.5, 0.25]; target 1; eps = 0.1, V = 3:
  // loss = 0.9·(-log 0.5) + 0.1/3·(-log 0.25 - log 0.5 - log 0.25) = 0.9·ln2 + (0.1/3)·5·ln2
  auto logits = testing::to_device(be, std::vector<float>{0, std::log(2.0f), 0});
  auto targets = testing::to_device(be, std::vector<std::int32_t>{1});
  LossSums s = be.cross_entropy(logits.data(), targets.data(), 1, 3, 0.1f, -1, 1.0f, nullptr, nullptr, DType::f32);
  EXPECT_NEAR(s.loss, (0.9 + 0.5 / 3) * std::log(2.0), 1e-6);
  EXPECT_NEAR(s.nll, std::log(2.0), 1e-6);
  EXPECT_EQ(s.tokens, 1);
  // gradient p - q: q = [0.1/3, 0.9 + 0.1/3, 0.1/3]
  auto g = testing::to_host(be, logits);
  EXPECT_NEAR(g[0], 0.25 - 0.1 / 3, 1e-6);
  EXPECT_NEAR(g[1], 0.5 - 0.9 - 0.1 / 3, 1e-6);
  EXPECT_NEAR(g[2], 0.25 - 0.1 / 3, 1e-6);
}

TEST_P(CrossEntropyTest, MatchesReferenceAndFiniteDifferencesIgnoringPadding) {
  Backend& be = *GetParam();
  const int rows = 5, vocab = 7, pad = 0;
  const float eps = 0.1f, grad_scale = 0.5f;
  auto logits = random_values(rows * vocab, 31, -3, 3);
  std::vector<std::int32_t> targets{3, 0, 6, 1, 0};  // rows 1 and 4 are padding
  auto loss = [&](const std::vector<double>& x) { return reference_loss(x, targets, vocab, eps, pad); };
  auto expected_grad = testing::numerical_gradient(loss, testing::to_double(logits));
  auto d = testing::to_device(be, logits);
  auto t = testing::to_device(be, targets);
  DeviceBuffer<float> row_nll(be, rows);
  LossSums s =
      be.cross_entropy(d.data(), t.data(), rows, vocab, eps, pad, grad_scale, row_nll.data(), nullptr, DType::f32);
  // Per-row -log p(target): the reference with no smoothing, one row at a time.
  const auto nll = testing::to_host(be, row_nll);
  for (int r = 0; r < rows; ++r) {
    const std::vector<double> row(logits.begin() + r * vocab, logits.begin() + (r + 1) * vocab);
    const double want = targets[r] == pad ? 0.0 : reference_loss(row, {targets[r]}, vocab, 0.0, pad);
    EXPECT_NEAR(nll[r], want, 1e-5) << "row " << r;
  }
  EXPECT_NEAR(s.loss, loss(testing::to_double(logits)), 1e-5);
  EXPECT_EQ(s.tokens, 3);
  auto g = testing::to_host(be, d);
  for (int i = 0; i < rows * vocab; ++i) EXPECT_NEAR(g[i], grad_scale * expected_grad[i], 1e-6) << i;
}

TEST_P(CrossEntropyTest, LogSoftmaxRowsNormalise) {
  Backend& be = *GetParam();
  auto x = random_values(4 * 9, 41, -20, 20);
  auto d = testing::to_device(be, x);
  be.log_softmax(d.data(), 4, 9);
  auto y = testing::to_host(be, d);
  for (int r = 0; r < 4; ++r) {
    double m = -1e30, s = 0;
    for (int j = 0; j < 9; ++j) m = std::max(m, static_cast<double>(x[r * 9 + j]));
    for (int j = 0; j < 9; ++j) s += std::exp(x[r * 9 + j] - m);
    for (int j = 0; j < 9; ++j) EXPECT_NEAR(y[r * 9 + j], x[r * 9 + j] - m - std::log(s), 1e-5);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, CrossEntropyTest, ::testing::ValuesIn(testing::all_backends()),
                         testing::backend_name);

}  // namespace
}  // namespace attn
