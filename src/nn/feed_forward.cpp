#include "nn/feed_forward.h"

namespace attn::nn {

void FeedForward::forward(Backend& be, Activations x, std::int64_t rows, const Hidden& hidden, float* y,
                          const HiddenDropout& dropout) const {
  // In bf16, the second product would round its input anyway: round once, keep that (without
  // dropout, on the pass that adds the bias).
  if (dropout.rate > 0) {
    fc1.forward(be, x, rows, hidden.f32, /*relu=*/true);
    be.dropout(hidden.f32, hidden.f32, rows * fc1.out, dropout.rate, dropout.seed);
    fc2.forward(be, keep(be, hidden.f32, rows * fc1.out, hidden.kept), rows, y);
    return;
  }
  fc2.forward(be, fc1.forward_kept(be, x, rows, hidden.f32, hidden.kept, /*relu=*/true), rows, y);
}

// With dropout, the hidden layer kept is h' = mask·h/(1-p): W2's gradient needs h', and ReLU's
// derivative is read from h' (h' > 0 exactly where h > 0 and the mask keeps it; elsewhere the
// gradient is 0 either way), then the same mask scales ∂L/∂h' into ∂L/∂h. Without dropout, where
// the gradient is rounded to bf16 for W1's products, ReLU's mask is applied on that pass.
void FeedForward::backward(Backend& be, Activations x, std::int64_t rows, const Hidden& hidden, Activations dy,
                           float* d_hidden, float* dx, RowBuffer dy_read, const HiddenDropout& dropout) const {
  const Activations kept = hidden.kept.read();
  fc2.backward(be, kept, dy, rows, d_hidden, /*accumulate_dx=*/false, dy_read);
  if (dropout.rate == 0 && fc1.folds_relu(dy_read))
    return fc1.backward(be, x, d_hidden, rows, dx, /*accumulate_dx=*/true, dy_read, kept);
  be.relu_backward(d_hidden, kept.data, kept.dtype, rows * fc1.out);
  if (dropout.rate > 0) be.dropout(d_hidden, d_hidden, rows * fc1.out, dropout.rate, dropout.seed);
  fc1.backward(be, x, d_hidden, rows, dx, /*accumulate_dx=*/true, dy_read);
}

}  // namespace attn::nn
