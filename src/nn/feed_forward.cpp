#include "nn/feed_forward.h"

namespace attn::nn {

void FeedForward::forward(Backend& be, const float* x, std::int64_t rows, float* hidden, float* y) const {
  fc1.forward(be, x, rows, hidden, /*relu=*/true);
  fc2.forward(be, hidden, rows, y);
}

void FeedForward::backward(Backend& be, const float* x, std::int64_t rows, const float* hidden,
                           const float* dy, float* d_hidden, float* dx) const {
  fc2.backward(be, hidden, dy, rows, d_hidden, /*accumulate_dx=*/false);
  be.relu_backward(d_hidden, hidden, rows * fc1.out);
  fc1.backward(be, x, d_hidden, rows, dx, /*accumulate_dx=*/true);
}

}  // namespace attn::nn
