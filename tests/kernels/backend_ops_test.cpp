// Every operation of ATTN_BACKEND_OPS, as ggml's test-backend-ops walks its list: one table entry
// per operation (overloads apart) runs it through Backend& on random inputs of several shapes (no
// elements where the operation allows it, one row, one column, sizes off the vector widths, and
// sizes past the CPU backend's threshold for threads) and compares with a scalar reference written
// from the contract in kernels/backend.h, in double precision. Tolerances follow from the data
// type: exact where float32 rounds once or not at all, k·u·(magnitude) with u = 2^-24 where float32
// sums or exponentiates, 2^-8 relatively through bfloat16, one step where int8 rounds; each entry
// states its own. BackendOpsTable fails naming any operation of the list that has no entry.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "common/backends.h"
#include "common/device_vector.h"
#include "common/bf16_rounding.h"
#include "common/reference_ops.h"

namespace attn {
namespace {

using testing::bf16_nearest_even;
using testing::bf16_value;
using testing::Expected;
using testing::Guarded;
using testing::kU32;
using testing::kUBf16;
using testing::random_ints;
using testing::random_values;
using testing::to_device;

// Element counts: none, one, odd, a vector's width, past it, and past 2^15 (threads on the CPU).
const std::vector<std::int64_t> kSizes{0, 1, 7, 16, 33, 1000, 70001};
// Rows × columns: no rows, one element, one row, one column, widths off 8 and 16, and over 2^15.
struct Shape {
  std::int64_t rows;
  int cols;
};
const std::vector<Shape> kShapes{{0, 8}, {1, 1}, {1, 37}, {5, 1}, {3, 16}, {17, 33}, {300, 130}};
std::string str(Shape s) { return std::to_string(s.rows) + "x" + std::to_string(s.cols); }
std::size_t size(Shape s) { return static_cast<std::size_t>(s.rows) * s.cols; }

// ---- Memory contents.

// copy_to_device, copy_to_host and copy: bytes from an odd address to an odd address, the bytes
// around the destination left alone.
enum class Copy { to_device, to_host, on_device };
void copy_case(Backend& be, Copy kind) {
  for (std::size_t bytes : {0, 1, 3, 64, 1001}) {
    SCOPED_TRACE(std::to_string(bytes) + " bytes");
    const auto src_ints = random_ints(bytes + 1, 1, 0, 256);
    const std::vector<std::uint8_t> src(src_ints.begin(), src_ints.end());  // copied from src + 1
    auto d_src = to_device(be, src);
    std::vector<std::uint8_t> host(bytes + 2, 0xA5), want = host;
    std::copy(src.begin() + 1, src.end(), want.begin() + 1);
    Guarded<std::uint8_t> dst(be, host);
    if (kind == Copy::to_device) be.copy_to_device(dst.data() + 1, src.data() + 1, bytes);
    if (kind == Copy::to_host) be.copy_to_host(host.data() + 1, d_src.data() + 1, bytes);
    if (kind == Copy::on_device) be.copy(dst.data() + 1, d_src.data() + 1, bytes);
    EXPECT_EQ(kind == Copy::to_host ? host : dst.host(), want);
  }
}
void run_copy_to_device(Backend& be) { copy_case(be, Copy::to_device); }
void run_copy_to_host(Backend& be) { copy_case(be, Copy::to_host); }
void run_copy(Backend& be) { copy_case(be, Copy::on_device); }

void run_fill(Backend& be) {
  for (std::int64_t n : kSizes)
    for (float value : {0.37f, -0.0f, INFINITY}) {
      SCOPED_TRACE(std::to_string(n) + " elements of " + std::to_string(value));
      Guarded<float> x(be, n);
      be.fill(x.data(), n, value);
      const auto got = x.host();
      EXPECT_EQ(std::count_if(
                    got.begin(), got.end(),
                    [&](float v) { return std::bit_cast<std::uint32_t>(v) != std::bit_cast<std::uint32_t>(value); }),
                0);
    }
}

// ---- Conversions.

void run_to_bf16(Backend& be) {
  const std::vector<std::uint32_t> special{
      0x00000000, 0x80000000,                          // ±0
      0x3F808000, 0x3F818000,                          // ties: 1 + 2^-8 down to 1, 1 + 3·2^-8 up to 1 + 2^-6
      0x00000001, 0x00008000, 0x00018000, 0x807FFFFF,  // subnormals: all to ±0
      0x7F7FFFFF, 0xFF7FFFFF, 0x7F7F8000,              // ±FLT_MAX and a tie at the top: to ±infinity
      0x7F800000, 0xFF800000,                          // ±infinity
      0x7FC00000, 0x7F800001, 0xFF800001};             // NaNs (one whose top half alone is infinity)
  for (std::int64_t n : kSizes) {
    SCOPED_TRACE(std::to_string(n) + " elements");
    // Random bit patterns (every exponent, subnormals, NaNs), the special values at both ends:
    // in a vector block and in the remainder.
    auto x = testing::random_float_bits(static_cast<std::size_t>(n), 4);
    for (std::size_t i = 0; i < special.size() && i < x.size(); ++i)
      x[i] = x[x.size() - 1 - i] = std::bit_cast<float>(special[i]);
    auto dx = to_device(be, x);
    Guarded<Bf16> y(be, n);
    be.to_bf16(dx.data(), n, y.data());
    const auto got = y.host();
    int misses = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const bool ok = std::isnan(x[i]) ? testing::bf16_is_nan(got[i]) : got[i] == bf16_nearest_even(x[i]);
      if (!ok && ++misses <= 3)
        ADD_FAILURE() << "to_bf16 of " << x[i] << " (bits " << std::hex << std::bit_cast<std::uint32_t>(x[i]) << ") at "
                      << std::dec << i << ": " << std::hex << got[i] << ", want " << bf16_nearest_even(x[i]);
    }
    EXPECT_EQ(misses, 0);
  }
}

void run_quantize_rows(Backend& be) {
  for (Shape s : kShapes) {
    SCOPED_TRACE(str(s));
    const std::int64_t ld = s.cols + 3;
    auto x = random_values(static_cast<std::size_t>(s.rows * ld), 5, -2, 2);
    for (std::int64_t r = 0; r < s.rows; ++r)  // rows of magnitudes 0.01 to 100
      for (int c = 0; c < s.cols; ++c) x[r * ld + c] *= std::pow(10.0f, static_cast<float>(r % 5 - 2));
    if (s.rows > 2) {  // a zero row (scale 1); max 127 (scale 1) with ties, away from zero; a negative max
      const float ties[] = {2.5f, -2.5f, 0.5f, -0.5f, 126.5f, -1.5f};
      for (int c = 0; c < s.cols; ++c) x[c] = 0, x[ld + c] = c ? ties[c % 6] : 127.0f;
      x[2 * ld] = -3.81f;
    }
    auto dx = to_device(be, x);
    Guarded<std::int8_t> q(be, static_cast<std::int64_t>(size(s)));
    Guarded<float> scales(be, s.rows);
    Guarded<std::int32_t> sums(be, s.rows);
    be.quantize_rows(dx.data(), s.rows, s.cols, ld, q.data(), scales.data(), sums.data());
    const auto got_q = q.host();
    const auto got_scales = scales.host();
    Expected want_scales, want_q, want_sums;
    for (std::int64_t r = 0; r < s.rows; ++r) {
      double max_abs = 0;
      for (int c = 0; c < s.cols; ++c) max_abs = std::max(max_abs, std::abs(static_cast<double>(x[r * ld + c])));
      const double scale = max_abs > 0 ? max_abs / 127 : 1;
      want_scales.add(scale, kU32 * scale);
      std::int64_t sum = 0;
      for (int c = 0; c < s.cols; ++c) {
        const double t = x[r * ld + c] / static_cast<double>(got_scales[r]);
        // std::round: half away from zero. Where float32's x / scale may round onto or off a tie, either side.
        const bool near_tie =
            std::abs(std::abs(t - std::trunc(t)) - 0.5) < 4 * kU32 * std::abs(t) && static_cast<float>(t) != t;
        want_q.add(std::clamp(std::round(t), -127.0, 127.0), near_tie ? 1 : 0);
        sum += got_q[r * s.cols + c];
      }
      want_sums.add(static_cast<double>(sum));
    }
    want_scales.check(got_scales, "scales");
    want_q.check(got_q, "q");
    want_sums.check(sums.host(), "sums");
  }
}

// ---- Element-wise: each result one float32 rounding of the exact value, so exactly equal to it.

void run_add(Backend& be) {
  for (std::int64_t n : kSizes) {
    SCOPED_TRACE(std::to_string(n) + " elements");
    const auto a = random_values(n, 6), b = random_values(n, 7);
    auto da = to_device(be, a), db = to_device(be, b);
    Guarded<float> y(be, n);
    be.add(da.data(), db.data(), y.data(), n);
    Expected want;
    for (std::int64_t i = 0; i < n; ++i) want.add(static_cast<float>(static_cast<double>(a[i]) + b[i]));
    want.check(y.host(), "y");
  }
}

void run_accumulate(Backend& be) {
  for (std::int64_t n : kSizes) {
    SCOPED_TRACE(std::to_string(n) + " elements");
    const auto x = random_values(n, 8), y0 = random_values(n, 9);
    auto dx = to_device(be, x);
    Guarded<float> y(be, y0);
    be.accumulate(dx.data(), y.data(), n);
    Expected want;
    for (std::int64_t i = 0; i < n; ++i) want.add(static_cast<float>(static_cast<double>(y0[i]) + x[i]));
    want.check(y.host(), "y");
  }
}

void run_scale(Backend& be) {
  for (std::int64_t n : kSizes)
    for (float s : {0.5f, -3.7f, 0.0f}) {
      SCOPED_TRACE(std::to_string(n) + " elements times " + std::to_string(s));
      const auto x0 = random_values(n, 10);
      Guarded<float> x(be, x0);
      be.scale(x.data(), n, s);
      Expected want;
      for (float v : x0) want.add(static_cast<float>(static_cast<double>(v) * s));
      want.check(x.host(), "x");
    }
}

// add_bias and add_bias_relu: x[r, c] + bias[c], the latter then max(·, 0); into x, or, given y,
// into y rounded to nearest even with x untouched (rows over 256 columns: the kernel's blocks).
void bias_case(Backend& be, bool relu) {
  std::vector<Shape> shapes = kShapes;
  shapes.push_back({3, 600});
  for (Shape s : shapes) {
    for (bool rounded : {false, true}) {
      SCOPED_TRACE(str(s) + (rounded ? " into bf16" : " in place"));
      const auto x0 = random_values(size(s), 11), bias = random_values(s.cols, 12);
      Guarded<float> x(be, x0);
      Guarded<Bf16> y(be, static_cast<std::int64_t>(size(s)));
      auto db = to_device(be, bias);
      Bf16* out = rounded ? y.data() : nullptr;
      relu ? be.add_bias_relu(x.data(), db.data(), s.rows, s.cols, out)
           : be.add_bias(x.data(), db.data(), s.rows, s.cols, out);
      std::vector<float> want(x0.size());
      for (std::size_t i = 0; i < x0.size(); ++i) {
        const float v = static_cast<float>(static_cast<double>(x0[i]) + bias[i % s.cols]);
        want[i] = relu ? std::max(v, 0.0f) : v;
      }
      if (!rounded) {
        Expected e;
        for (float v : want) e.add(v);
        e.check(x.host(), "x");
        EXPECT_EQ(y.host(), std::vector<Bf16>(size(s), Bf16{0xFFFF})) << "y written without being asked";
        continue;
      }
      EXPECT_EQ(x.host(), x0) << "x written where the sum goes to y";
      const auto got = y.host();
      int misses = 0;
      for (std::size_t i = 0; i < want.size(); ++i) misses += got[i] != bf16_nearest_even(want[i]);
      EXPECT_EQ(misses, 0) << "of " << want.size() << " sums rounded to bf16";
    }
  }
}
void run_add_bias(Backend& be) { bias_case(be, false); }
void run_add_bias_relu(Backend& be) { bias_case(be, true); }

// ReLU outputs to mask by: random values with zeros of both signs (every fifth), and their bf16
// copy with zeros of both signs, subnormals, infinities and ±1 in every third place.
struct ReluOutputs {
  std::vector<float> f32;
  std::vector<Bf16> bf16;
};
ReluOutputs relu_outputs(std::size_t n, unsigned seed) {
  const std::vector<Bf16> special{0x0000, 0x8000, 0x0001, 0x8001, 0x7F80, 0xFF80, 0x3F80, 0xBF80};
  ReluOutputs y{random_values(n, seed), std::vector<Bf16>(n)};
  for (std::size_t i = 0; i < n; i += 5) y.f32[i] = i % 2 ? -0.0f : 0.0f;
  for (std::size_t i = 0; i < n; ++i) y.bf16[i] = i % 3 ? bf16_nearest_even(y.f32[i]) : special[i / 3 % special.size()];
  return y;
}

// relu_backward: dy where y > 0, else 0; y in float or in bf16 (relu_outputs).
void relu_backward_case(Backend& be, bool bf16) {
  for (std::int64_t n : kSizes) {
    SCOPED_TRACE(std::to_string(n) + " elements");
    const auto [y, y16] = relu_outputs(static_cast<std::size_t>(n), 13);
    const auto dy0 = random_values(n, 14);
    Guarded<float> dy(be, dy0);
    auto dy32 = to_device(be, y);
    auto dy16 = to_device(be, y16);
    bf16 ? be.relu_backward(dy.data(), dy16.data(), DType::bf16, n)
         : be.relu_backward(dy.data(), dy32.data(), DType::f32, n);
    Expected want;
    for (std::int64_t i = 0; i < n; ++i) want.add((bf16 ? bf16_value(y16[i]) : y[i]) > 0 ? dy0[i] : 0.0);
    want.check(dy.host(), "dy");
  }
}
void run_relu_backward(Backend& be) {
  for (bool bf16 : {false, true}) {
    SCOPED_TRACE(bf16 ? "y in bf16" : "y in f32");
    relu_backward_case(be, bf16);
  }
}

// bias_grad: dbias += Σ rows of dy, and dy copied on the same pass where asked: none, f32 (the
// same bits), bf16 (rounded to nearest even); with a ReLU output (none, f32, bf16: zeros of both
// signs, subnormals, infinities among random values), every element of dy where it is not > 0
// counts as 0 in the sum and the copy, dy itself untouched.
void bias_grad_case(Backend& be, const char* copy, const char* relu) {
  const std::string kind = copy, relu_kind = relu;
  for (Shape s : kShapes) {
    SCOPED_TRACE(str(s) + ", copy: " + kind + ", relu: " + relu_kind);
    const auto dy0 = random_values(size(s), 15, -2, 2), init = random_values(s.cols, 16);
    const auto [y, y16] = relu_outputs(size(s), 17);
    auto d_dy = to_device(be, dy0);
    auto d_y32 = to_device(be, y);
    auto d_y16 = to_device(be, y16);
    const void* relu_y = relu_kind == "f32"    ? static_cast<const void*>(d_y32.data())
                         : relu_kind == "bf16" ? static_cast<const void*>(d_y16.data())
                                               : nullptr;
    const DType relu_dtype = relu_kind == "bf16" ? DType::bf16 : DType::f32;
    // What the sum and the copy read: dy where y > 0, by the values (not the kernel's bit tests).
    std::vector<float> dy = dy0;
    if (relu_y)
      for (std::size_t i = 0; i < dy.size(); ++i)
        if (!((relu_kind == "bf16" ? bf16_value(y16[i]) : static_cast<double>(y[i])) > 0)) dy[i] = 0.0f;
    Guarded<float> dbias(be, init);
    Guarded<Bf16> dy16(be, static_cast<std::int64_t>(size(s)));
    Guarded<float> dy32(be, static_cast<std::int64_t>(size(s)));
    if (kind == "bf16")
      be.bias_grad(d_dy.data(), s.rows, s.cols, dbias.data(), dy16.data(), DType::bf16, relu_y, relu_dtype);
    else if (kind == "f32")
      be.bias_grad(d_dy.data(), s.rows, s.cols, dbias.data(), dy32.data(), DType::f32, relu_y, relu_dtype);
    else
      be.bias_grad(d_dy.data(), s.rows, s.cols, dbias.data(), nullptr, DType::f32, relu_y, relu_dtype);
    EXPECT_EQ(testing::to_host(be, d_dy), dy0) << "dy itself is left as it was";
    Expected want;
    for (int c = 0; c < s.cols; ++c) {
      double sum = init[c], abs_sum = std::abs(init[c]);
      for (std::int64_t r = 0; r < s.rows; ++r) sum += dy[r * s.cols + c], abs_sum += std::abs(dy[r * s.cols + c]);
      want.add(sum, (s.rows + 1) * kU32 * abs_sum);
    }
    want.check(dbias.host(), "dbias");
    if (kind == "f32") {
      EXPECT_EQ(dy32.host(), dy) << "the f32 copy of dy";
    }
    if (kind != "bf16") continue;
    std::vector<Bf16> rounded(dy.size());
    std::transform(dy.begin(), dy.end(), rounded.begin(), bf16_nearest_even);
    EXPECT_EQ(dy16.host(), rounded) << "dy rounded to bf16";
  }
}
void run_bias_grad(Backend& be) {
  for (const char* copy : {"none", "f32", "bf16"})
    for (const char* relu : {"none", "f32", "bf16"}) bias_grad_case(be, copy, relu);
}

void run_sum_squares(Backend& be) {
  for (std::int64_t n : kSizes) {
    const auto x = random_values(n, 17, -3, 3);
    double want = 0;
    for (float v : x) want += static_cast<double>(v) * v;
    auto dx = to_device(be, x);
    EXPECT_NEAR(be.sum_squares(dx.data(), n), want, (n + 1) * 0x1p-53 * want) << n << " elements";
  }
}

// dropout's documented properties: each element 0 or x / (1 - p); the mask a function of the seed
// and the element's index only (the same call twice, in place, on other values as the backward pass
// does, on a prefix: the same mask); another seed another mask; the kept fraction near 1 - p.
void run_dropout(Backend& be) {
  const std::uint64_t seed = 0x9E3779B97F4A7C15ULL;
  for (float p : {0.0f, 0.1f, 0.5f})
    for (std::int64_t n : kSizes) {
      SCOPED_TRACE(std::to_string(n) + " elements, p = " + std::to_string(p));
      auto x = random_values(n, 18, 0.5f, 1.5f), g = random_values(n, 19, 0.5f, 1.5f);  // no zeros
      for (std::int64_t i = 1; i < n; i += 2) x[i] = -x[i];
      auto dx = to_device(be, x);
      Guarded<float> y(be, n), again(be, n), prefix(be, n / 2), other_seed(be, n), in_place(be, x), grad(be, g);
      be.dropout(dx.data(), y.data(), n, p, seed);
      be.dropout(dx.data(), again.data(), n, p, seed);
      be.dropout(dx.data(), prefix.data(), n / 2, p, seed);
      be.dropout(dx.data(), other_seed.data(), n, p, seed + 1);
      be.dropout(in_place.data(), in_place.data(), n, p, seed);
      be.dropout(grad.data(), grad.data(), n, p, seed);
      const auto got = y.host(), got_grad = grad.host();
      EXPECT_EQ(again.host(), got) << "the same call twice";
      EXPECT_EQ(in_place.host(), got) << "y = x";
      EXPECT_EQ(prefix.host(), std::vector<float>(got.begin(), got.begin() + n / 2)) << "the first n / 2 elements";
      Expected want;
      std::int64_t kept = 0, other_mask = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        const bool keep = got[i] != 0;
        kept += keep;
        other_mask += keep != (got_grad[i] != 0);
        const double scaled = x[i] / (1.0 - p);
        want.add(keep ? scaled : 0.0, 4 * kU32 * std::abs(scaled));  // 1 - p, its inverse, the product
      }
      want.check(got, "y");
      EXPECT_EQ(other_mask, 0) << "the mask differs on other values with the same seed";
      if (p == 0) {
        EXPECT_EQ(kept, n);
      }
      if (p == 0 || n < 1000) continue;
      EXPECT_NEAR(static_cast<double>(kept), (1 - p) * n, 5 * std::sqrt(n * p * (1 - p))) << "5 sigma";
      EXPECT_NE(other_seed.host(), got) << "seed + 1 gives the same mask";
    }
}

// ---- Layer normalisation.

// x with row means 0 to 2, gamma around 1; mean and rstd in double (rstd = 1 / sqrt(var + eps)).
struct LayerNormRef {
  std::vector<float> x, gamma, beta;
  std::vector<double> mean, rstd, abs_mean;
};
// ln's rows' statistics from its x.
void layernorm_statistics(LayerNormRef& ln, Shape s, float eps) {
  ln.mean.clear(), ln.rstd.clear(), ln.abs_mean.clear();
  for (std::int64_t r = 0; r < s.rows; ++r) {
    double sum = 0, abs_sum = 0, sq = 0;
    for (int c = 0; c < s.cols; ++c) sum += ln.x[r * s.cols + c];
    for (int c = 0; c < s.cols; ++c) abs_sum += std::abs(ln.x[r * s.cols + c]);
    for (int c = 0; c < s.cols; ++c) sq += std::pow(ln.x[r * s.cols + c] - sum / s.cols, 2);
    ln.mean.push_back(sum / s.cols), ln.abs_mean.push_back(abs_sum / s.cols);
    ln.rstd.push_back(1 / std::sqrt(sq / s.cols + eps));
  }
}
LayerNormRef layernorm_inputs(Shape s, float eps) {
  LayerNormRef ln{
      random_values(size(s), 20, -2, 2), random_values(s.cols, 21, 0.5f, 1.5f), random_values(s.cols, 22), {}, {}, {}};
  for (std::int64_t r = 0; r < s.rows; ++r)
    for (int c = 0; c < s.cols; ++c) ln.x[r * s.cols + c] += static_cast<float>(r % 3);
  layernorm_statistics(ln, s, eps);
  return ln;
}

// Where the kernel is asked to keep the normalised rows' input: nowhere, in a buffer of its own, or
// in place (over the residual; over x where there is none).
enum class KeptSum { nowhere, apart, in_place };

// Every form of the sublayer connection's pass: x alone or x + residual (a float sum, as IEEE
// addition gives it), the sum kept nowhere, apart or in place, y rounded to bf16 or not.
void run_layernorm(Backend& be) {
  const float eps = 1e-5f;
  for (Shape s : kShapes)
    for (bool residual : {false, true})
      for (KeptSum kept : {KeptSum::nowhere, KeptSum::apart, KeptSum::in_place})
        for (bool rounded : {false, true}) {
          SCOPED_TRACE(str(s) + (residual ? " + residual" : "") + " sum kept " +
                       std::to_string(static_cast<int>(kept)) + (rounded ? ", rounded" : ""));
          LayerNormRef ln = layernorm_inputs(s, eps);
          std::vector<float> x = ln.x, res(size(s), 0.0f);
          if (residual) {
            res = random_values(size(s), 26, -1, 1);
            for (std::size_t i = 0; i < x.size(); ++i) x[i] = ln.x[i] - res[i];
            for (std::size_t i = 0; i < x.size(); ++i) ln.x[i] = x[i] + res[i];  // what is normalised
            layernorm_statistics(ln, s, eps);
          }
          const auto n = static_cast<std::int64_t>(size(s));
          Guarded<float> dx(be, x), dres(be, res), sum(be, n), y(be, n), mean(be, s.rows), rstd(be, s.rows);
          Guarded<Bf16> y16(be, n);
          auto dg = to_device(be, ln.gamma), db = to_device(be, ln.beta);
          float* sum_at = kept == KeptSum::nowhere ? nullptr
                          : kept == KeptSum::apart ? sum.data()
                          : residual               ? dres.data()
                                                   : dx.data();
          be.layernorm(dx.data(), residual ? dres.data() : nullptr, dg.data(), db.data(), sum_at, y.data(),
                       rounded ? y16.data() : nullptr, mean.data(), rstd.data(), s.rows, s.cols, eps);
          // Float sums over a row: the mean off by (cols + 8)·u·mean|x|, rstd by (cols + 8)·u relatively.
          const double k = (s.cols + 8) * kU32;
          Expected want_y, want_mean, want_rstd;
          for (std::int64_t r = 0; r < s.rows; ++r) {
            want_mean.add(ln.mean[r], k * ln.abs_mean[r]);
            want_rstd.add(ln.rstd[r], k * ln.rstd[r]);
            for (int c = 0; c < s.cols; ++c) {
              const double xhat = (ln.x[r * s.cols + c] - ln.mean[r]) * ln.rstd[r];
              want_y.add(
                  xhat * ln.gamma[c] + ln.beta[c],
                  k * (std::abs(ln.gamma[c]) * (std::abs(xhat) + ln.rstd[r] * ln.abs_mean[r]) + std::abs(ln.beta[c])));
            }
          }
          const std::vector<float> got = y.host();
          want_y.check(got, "y");
          want_mean.check(mean.host(), "mean");
          want_rstd.check(rstd.host(), "rstd");
          // The sum exactly where it was asked for, the inputs untouched elsewhere.
          EXPECT_EQ(kept == KeptSum::in_place && !residual ? ln.x : x, dx.host()) << "x";
          EXPECT_EQ(kept == KeptSum::in_place && residual ? ln.x : res, dres.host()) << "residual";
          if (kept == KeptSum::apart) {
            EXPECT_EQ(ln.x, sum.host()) << "sum";
          }
          // The rounding: y's own values to bf16 by an independent rule, or untouched.
          const std::vector<Bf16> got16 = y16.host();
          for (std::int64_t i = 0; rounded && i < n; ++i)
            ASSERT_EQ(got16[i], testing::bf16_bits(got[i])) << "y rounded, element " << i << " of " << got[i];
          if (!rounded) {
            EXPECT_EQ(got16, Guarded<Bf16>(be, n).host()) << "the bf16 rows are written only if asked";
          }
        }
}

// dx = dL/dx of y = gamma·(x - mean)·rstd + beta, with xhat = (x - mean)·rstd and g = dy·gamma:
// rstd·(g - mean(g) - xhat·mean(g·xhat)); dgamma += Σ dy·xhat and dbeta += Σ dy over rows.
// dx apart from dy or over it (in place, as training calls it), and the sublayer's gradient s in
// each form asked for (SublayerGradient): s = dropout(dx) with the mask dropout applies (at p = 0
// dx's bits), its bf16 rounding by an independent rule, its column sums against a float64 sum
// and bit for bit against bias_grad's own pass over s (the pass they replace).
struct SublayerForm {
  const char* name;
  bool f32, bf16, bias;
  float dropout;
};
const SublayerForm kSublayerForms[] = {{"none", false, false, false, 0.0f},
                                       {"f32", true, false, false, 0.0f},
                                       {"f32, dropout", true, false, false, 0.3f},
                                       {"bf16 + bias", false, true, true, 0.0f},
                                       {"bf16 + bias, dropout", false, true, true, 0.1f},
                                       {"all, dropout", true, true, true, 0.5f}};

void run_layernorm_backward(Backend& be) {
  const std::uint64_t seed = 0x243F6A8885A308D3ULL;
  for (Shape s : kShapes)
    for (bool in_place : {false, true})
      for (const SublayerForm& form : kSublayerForms) {
        SCOPED_TRACE(str(s) + (in_place ? " in place" : "") + ", sublayer: " + form.name);
        const std::int64_t n = static_cast<std::int64_t>(size(s));
        const LayerNormRef ln = layernorm_inputs(s, 1e-5f);
        const std::vector<float> mean(ln.mean.begin(), ln.mean.end()), rstd(ln.rstd.begin(), ln.rstd.end());
        const auto dy = random_values(size(s), 23), dgamma0 = random_values(s.cols, 24),
                   dbeta0 = random_values(s.cols, 25), dbias0 = random_values(s.cols, 26);
        auto dx_in = to_device(be, ln.x), dmean = to_device(be, mean), drstd = to_device(be, rstd),
             dg = to_device(be, ln.gamma);
        Guarded<float> d_dy(be, dy), dx_apart(be, n), dgamma(be, dgamma0), dbeta(be, dbeta0), s32(be, n),
            dbias(be, dbias0);
        Guarded<Bf16> s16(be, n);
        Guarded<float>& dx = in_place ? d_dy : dx_apart;
        const SublayerGradient sublayer{form.f32 ? s32.data() : nullptr, form.bf16 ? s16.data() : nullptr,
                                        form.bias ? dbias.data() : nullptr, form.dropout, seed};
        be.layernorm_backward(d_dy.data(), dx_in.data(), dmean.data(), drstd.data(), dg.data(), dx.data(), sublayer,
                              dgamma.data(), dbeta.data(), s.rows, s.cols);
        const std::vector<float> got_dx = dx.host();
        // s as dropout makes it from dx (the mask of the forward pass's call with this seed).
        Guarded<float> want_s(be, got_dx);
        be.dropout(want_s.data(), want_s.data(), n, form.dropout, seed);
        const std::vector<float> s_ref = want_s.host();
        if (form.f32) {
          EXPECT_EQ(s32.host(), s_ref) << "s in float: dropout's bits on dx";
        } else {
          // (As bits: the guard's pattern is a NaN.)
          const auto bits = [](const std::vector<float>& v) {
            std::vector<std::uint32_t> b(v.size());
            std::transform(v.begin(), v.end(), b.begin(), [](float f) { return std::bit_cast<std::uint32_t>(f); });
            return b;
          };
          EXPECT_EQ(bits(s32.host()), bits(Guarded<float>(be, n).host())) << "no float s unless asked";
        }
        const std::vector<Bf16> got16 = s16.host();
        for (std::int64_t i = 0; form.bf16 && i < n; ++i)
          ASSERT_EQ(got16[i], testing::bf16_bits(s_ref[i])) << "s rounded, element " << i << " of " << s_ref[i];
        if (!form.bf16) {
          EXPECT_EQ(got16, Guarded<Bf16>(be, n).host()) << "no bf16 s unless asked";
        }
        if (form.bias) {
          Expected want_bias;
          for (int c = 0; c < s.cols; ++c) {
            double sum = dbias0[c], abs_sum = std::abs(dbias0[c]);
            for (std::int64_t r = 0; r < s.rows; ++r)
              sum += s_ref[r * s.cols + c], abs_sum += std::abs(s_ref[r * s.cols + c]);
            want_bias.add(sum, (s.rows + 1) * kU32 * abs_sum);
          }
          const std::vector<float> got_bias = dbias.host();
          want_bias.check(got_bias, "the sublayer's bias gradient");
          Guarded<float> by_pass(be, dbias0);
          be.bias_grad(want_s.data(), s.rows, s.cols, by_pass.data(), nullptr, DType::f32, nullptr, DType::f32);
          EXPECT_EQ(got_bias, by_pass.host()) << "the bias gradient in bias_grad's order";
        } else {
          EXPECT_EQ(dbias.host(), dbias0) << "no bias gradient unless asked";
        }
        if (!in_place) {
          EXPECT_EQ(d_dy.host(), dy) << "dy untouched";
        }
        Expected want_dx;
        std::vector<double> sum_gamma(dgamma0.begin(), dgamma0.end()), sum_beta(dbeta0.begin(), dbeta0.end());
        std::vector<double> abs_gamma(s.cols), abs_beta(s.cols);
        for (std::int64_t r = 0; r < s.rows; ++r) {
          const float* xr = &ln.x[r * s.cols];
          const float* dyr = &dy[r * s.cols];
          auto xhat = [&](int c) { return (xr[c] - static_cast<double>(mean[r])) * rstd[r]; };
          double mean_g = 0, mean_gx = 0, abs_g = 0, abs_gx = 0;
          for (int c = 0; c < s.cols; ++c) {
            const double g = static_cast<double>(dyr[c]) * ln.gamma[c];
            mean_g += g / s.cols, mean_gx += g * xhat(c) / s.cols;
            abs_g += std::abs(g) / s.cols, abs_gx += std::abs(g * xhat(c)) / s.cols;
            sum_gamma[c] += dyr[c] * xhat(c), abs_gamma[c] += std::abs(dyr[c] * xhat(c));
            sum_beta[c] += dyr[c], abs_beta[c] += std::abs(dyr[c]);
          }
          for (int c = 0; c < s.cols; ++c) {
            const double g = static_cast<double>(dyr[c]) * ln.gamma[c];
            want_dx.add(rstd[r] * (g - mean_g - xhat(c) * mean_gx),
                        (s.cols + 8) * kU32 * rstd[r] * (std::abs(g) + abs_g + std::abs(xhat(c)) * abs_gx));
          }
        }
        Expected want_dgamma, want_dbeta;
        for (int c = 0; c < s.cols; ++c) {
          want_dgamma.add(sum_gamma[c], (s.rows + 8) * kU32 * (std::abs(dgamma0[c]) + abs_gamma[c]));
          want_dbeta.add(sum_beta[c], (s.rows + 1) * kU32 * (std::abs(dbeta0[c]) + abs_beta[c]));
        }
        want_dx.check(got_dx, "dx");
        want_dgamma.check(dgamma.host(), "dgamma");
        want_dbeta.check(dbeta.host(), "dbeta");
      }
}

// ---- Attention.

// Scores [batch, heads, tq, tk]: query q (position q + offset) sees key k < lengths[b], and k <=
// q + offset if causal, and |q + offset - k| <= window if window > 0 (AttentionMask).
struct SoftmaxCase {
  int batch, heads, tq, tk;
  std::vector<std::int32_t> lengths;
  bool causal;
  int offset, window;
  float scale;
};
const std::vector<SoftmaxCase> kSoftmaxCases{
    {1, 1, 1, 1, {}, false, 0, 0, 1.0f},                // one score
    {0, 2, 3, 3, {}, false, 0, 0, 1.0f},                // no sentences
    {2, 3, 5, 7, {7, 3}, false, 0, 0, 0.7f},            // padding
    {2, 2, 6, 6, {6, 0}, true, 0, 0, 0.125f},           // causal; a sentence of no keys: rows of zeros
    {1, 2, 4, 9, {}, true, 5, 0, 0.7f},                 // queries 5 to 8 of 9 (incremental)
    {2, 1, 37, 37, {37, 20}, false, 0, 3, 0.7f},        // restricted attention
    {1, 2, 17, 70, {}, true, 53, 4, 0.35f},             // causal and a window, with an offset
    {4, 4, 33, 40, {40, 33, 1, 17}, false, 0, 0, 0.7f}  // over 2^14 scores (threads)
};

// The CPU's attention softmax and its gradient (cpu/ops.h): the steps inside Backend::attention
// and attention_backward, not operations of the Backend; run on the CPU backend's memory (the
// host's), checked against the same double reference at the end of this file.
void run_attention_softmax(Backend& be) {
  for (const SoftmaxCase& c : kSoftmaxCases) {
    SCOPED_TRACE(std::to_string(c.batch) + "x" + std::to_string(c.heads) + "x" + std::to_string(c.tq) + "x" +
                 std::to_string(c.tk) + (c.causal ? " causal" : "") + " window " + std::to_string(c.window));
    const std::size_t n = static_cast<std::size_t>(c.batch) * c.heads * c.tq * c.tk;
    const auto scores = random_values(n, 26, -3, 3);
    Guarded<float> d(be, scores);
    auto lengths = to_device(be, c.lengths);
    const AttentionMask mask{c.lengths.empty() ? nullptr : lengths.data(), c.causal, c.offset, c.window};
    cpu::attention_softmax(d.data(), c.batch, c.heads, c.tq, c.tk, mask, c.scale);
    Expected want;
    for (std::size_t row = 0; row < n / std::max(c.tk, 1); ++row) {
      const int b = static_cast<int>(row / (c.heads * c.tq)), pos = static_cast<int>(row % c.tq) + c.offset;
      auto visible = [&](int k) {
        return (c.lengths.empty() || k < c.lengths[b]) && (!c.causal || k <= pos) &&
               (c.window == 0 || std::abs(pos - k) <= c.window);
      };
      std::vector<double> x;
      for (int k = 0; k < c.tk; ++k)
        if (visible(k)) x.push_back(static_cast<double>(c.scale) * scores[row * c.tk + k]);
      const testing::Softmax sm = testing::softmax(x);
      for (int k = 0, j = 0; k < c.tk; ++k) {
        if (!visible(k)) {
          want.add(0);
          continue;
        }
        want.add(sm.p[j], sm.tol[j]);
        ++j;
      }
    }
    want.check(d.host(), "probabilities (masked: exactly 0)");
  }
}

// ∂L/∂scores from ∂L/∂probs for probs = softmax(scale·scores): scale·p·(dp - Σ dp·p).
void run_attention_softmax_backward(Backend& be) {
  const float scale = 0.7f;
  for (Shape s : kShapes) {  // rows × keys
    SCOPED_TRACE(str(s));
    std::vector<float> probs;
    for (std::int64_t r = 0; r < s.rows; ++r) {  // the last third of each row's keys masked
      const auto x = random_values(s.cols, 27 + r, -3, 3);
      const testing::Softmax sm = testing::softmax(std::vector<double>(x.begin(), x.end() - s.cols / 3));
      probs.insert(probs.end(), sm.p.begin(), sm.p.end());
      probs.resize(probs.size() + s.cols / 3, 0.0f);
    }
    const auto dp = random_values(size(s), 28);
    auto dprobs = to_device(be, probs);
    Guarded<float> d(be, dp);
    cpu::attention_softmax_backward(d.data(), dprobs.data(), s.rows, s.cols, scale);
    Expected want;
    for (std::int64_t r = 0; r < s.rows; ++r) {
      double dot = 0, abs_dot = 0;
      for (int k = 0; k < s.cols; ++k)
        dot += static_cast<double>(dp[r * s.cols + k]) * probs[r * s.cols + k],
            abs_dot += std::abs(dp[r * s.cols + k] * probs[r * s.cols + k]);
      for (int k = 0; k < s.cols; ++k) {
        const double p = probs[r * s.cols + k], g = dp[r * s.cols + k];
        want.add(scale * p * (g - dot), (s.cols + 8) * kU32 * scale * p * (std::abs(g) + abs_dot));
      }
    }
    want.check(d.host(), "dscores");
  }
}

// cached_attention (CachedAttention): row r's position p in cached row rows_of[r·stride + p]
// (stride 0: rows_of[r]); it sees [lo, hi): hi = keys, or key_lengths of the cached row of its
// position 0; with window > 0, lo = max(0, query_position - window) and hi = min(hi,
// query_position + window + 1), else lo = 0. probs =
// softmax(q·k/√d_k) there, 0 elsewhere; ctx = probs·v.
struct CachedCase {
  const char* what;
  int rows, heads, d_k, d_v, cached_rows, keys;
  bool table_per_position;                // rows_of_stride = keys, else 0
  std::vector<std::int32_t> key_lengths;  // per cached row; empty: none
  int query_position, window;
};
const std::vector<CachedCase> kCachedCases{
    {"one key", 1, 1, 1, 1, 1, 1, false, {}, 0, 0},
    {"no rows", 0, 2, 4, 4, 1, 3, false, {}, 2, 0},
    {"histories through the table", 6, 3, 16, 8, 8, 10, true, {}, 9, 0},
    {"window", 6, 3, 16, 8, 8, 10, true, {}, 9, 3},
    {"window clipped at position 0", 3, 2, 8, 8, 3, 2, false, {}, 1, 3},
    {"encoder memory: padded keys, a row of none", 8, 4, 8, 5, 3, 12, false, {5, 0, 12}, 0, 0},
    {"heads of 64", 4, 2, 64, 64, 4, 7, true, {}, 6, 0},
    {"heads of 64, padded keys", 5, 2, 64, 64, 3, 9, false, {9, 4, 1}, 0, 0},
    // d_k = 64 takes its scores 16 keys at a time: whole blocks, a part block, a window's
    // unaligned start, lengths at and either side of a block's end.
    {"heads of 64, 37 keys: two blocks and a part", 6, 4, 64, 64, 6, 37, true, {}, 36, 0},
    {"heads of 64, a window inside 40 keys", 3, 2, 64, 64, 4, 40, true, {}, 20, 9},
    {"heads of 64, lengths 33, 17, 15, 16, 1", 5, 2, 64, 64, 5, 33, false, {15, 33, 16, 17, 1}, 0, 0},
    {"many rows (threads)", 32, 4, 32, 32, 8, 20, true, {}, 19, 0},
    {"window, query before the last key", 2, 1, 4, 4, 2, 9, false, {}, 3, 2},
};

void run_cached_attention(Backend& be) {
  unsigned seed = 30;
  for (const CachedCase& c : kCachedCases) {
    SCOPED_TRACE(c.what);
    const int ld_q = c.heads * c.d_k + 3, ld_cache = c.heads * (c.d_k + c.d_v) + 2;
    const std::int64_t row_stride = static_cast<std::int64_t>(c.keys) * ld_cache + 5,
                       stride = c.table_per_position ? c.keys : 0;
    const auto q = random_values(static_cast<std::size_t>(c.rows) * ld_q, ++seed, -2, 2);
    const auto cache = random_values(static_cast<std::size_t>(c.cached_rows * row_stride), ++seed, -2, 2);
    // Row r's position p in cached row (7r + 3p) mod cached_rows (beam search's reordered
    // histories), or all of row r in cached row (2r + 1) mod cached_rows.
    std::vector<std::int32_t> rows_of;
    for (int r = 0; r < c.rows; ++r)
      for (int p = 0; p < (stride ? c.keys : 1); ++p)
        rows_of.push_back(stride ? (7 * r + 3 * p) % c.cached_rows : (2 * r + 1) % c.cached_rows);
    auto dq = to_device(be, q), dcache = to_device(be, cache);
    auto drows_of = to_device(be, rows_of), dlengths = to_device(be, c.key_lengths);
    Guarded<float> probs(be, static_cast<std::int64_t>(c.rows) * c.heads * c.keys),
        ctx(be, static_cast<std::int64_t>(c.rows) * c.heads * c.d_v);
    CachedAttention a;
    a.rows = c.rows, a.heads = c.heads, a.d_k = c.d_k, a.d_v = c.d_v, a.q = dq.data(), a.ld_q = ld_q;
    a.cache = dcache.data(), a.row_stride = row_stride, a.ld_cache = ld_cache;
    a.rows_of = drows_of.data(), a.rows_of_stride = stride, a.keys = c.keys;
    a.key_lengths = c.key_lengths.empty() ? nullptr : dlengths.data();
    a.query_position = c.query_position, a.window = c.window;
    be.cached_attention(a, probs.data(), ctx.data());
    Expected want_probs, want_ctx;
    for (int r = 0; r < c.rows; ++r)
      for (int h = 0; h < c.heads; ++h) {
        const std::int64_t table = stride ? r * stride : r;  // row r's entries of rows_of
        auto at = [&](int p) { return &cache[rows_of[table + (stride ? p : 0)] * row_stride + p * ld_cache]; };
        int hi = c.key_lengths.empty() ? c.keys : c.key_lengths[rows_of[table]];
        if (c.window > 0) hi = std::min(hi, c.query_position + c.window + 1);
        const int lo = c.window > 0 ? std::max(0, c.query_position - c.window) : 0;
        std::vector<double> scores;
        double score_error = 0;  // a float32 dot product of d_k terms, scaled
        for (int p = lo; p < hi; ++p) {
          double s = 0, abs_s = 0;
          for (int i = 0; i < c.d_k; ++i)
            s += static_cast<double>(q[r * ld_q + h * c.d_k + i]) * at(p)[h * c.d_k + i],
                abs_s += std::abs(q[r * ld_q + h * c.d_k + i] * at(p)[h * c.d_k + i]);
          scores.push_back(s / std::sqrt(c.d_k));
          score_error = std::max(score_error, (c.d_k + 2) * kU32 * abs_s / std::sqrt(c.d_k));
        }
        const testing::Softmax sm = testing::softmax(scores);
        for (int p = 0; p < c.keys; ++p)
          p < lo || p >= hi ? want_probs.add(0)
                            : want_probs.add(sm.p[p - lo], sm.tol[p - lo] + 4 * score_error * sm.p[p - lo]);
        for (int i = 0; i < c.d_v; ++i) {
          double v = 0, tol = 0;
          for (int p = lo; p < hi; ++p) {
            const double value = at(p)[c.heads * c.d_k + h * c.d_v + i];
            v += sm.p[p - lo] * value;
            tol += (sm.tol[p - lo] + 4 * score_error * sm.p[p - lo] + (hi - lo + 2) * kU32 * sm.p[p - lo]) *
                   std::abs(value);
          }
          want_ctx.add(v, tol);
        }
      }
    want_probs.check(probs.host(), "probs (outside [lo, hi): exactly 0)");
    want_ctx.check(ctx.host(), "ctx");
  }
}

// ---- Embeddings: out[r] = table[ids[r]]·scale + positions[r % seq_len], the table f32 or s8.

void run_embedding(Backend& be) {
  const int vocab = 11, seq_len = 3;
  for (std::size_t i = 0; i < kShapes.size(); ++i) {
    const Shape s = kShapes[i];  // ids × dim
    const int ld = s.cols + 2;
    const bool positions = i % 2 == 0;
    const float scale = i % 3 ? 2.5f : 1.0f;
    const auto ids = random_ints(s.rows, 40, 0, vocab);
    const auto table = random_values(static_cast<std::size_t>(vocab) * ld, 41);
    const auto pos = random_values(static_cast<std::size_t>(seq_len) * s.cols, 42);
    auto q = random_ints(static_cast<std::size_t>(vocab) * ld, 43, -127, 128);
    const std::vector<std::int8_t> q8(q.begin(), q.end());
    const auto scales = random_values(vocab, 44, 0.001f, 0.1f);
    std::vector<std::int32_t> row_sums(vocab);
    for (int v = 0; v < vocab; ++v) row_sums[v] = std::accumulate(&q[v * ld], &q[v * ld] + s.cols, 0);
    auto d_ids = to_device(be, ids), d_sums = to_device(be, row_sums);
    auto d_table = to_device(be, table), d_pos = to_device(be, pos), d_scales = to_device(be, scales);
    auto d_q = to_device(be, q8);
    for (DType dtype : {DType::f32, DType::s8}) {
      SCOPED_TRACE(str(s) + " " + to_string(dtype) + (positions ? " with positions" : ""));
      const MatrixRef t = dtype == DType::f32 ? f32_matrix(d_table.data(), ld)
                                              : s8_matrix(d_q.data(), d_scales.data(), d_sums.data(), ld);
      Guarded<float> out(be, static_cast<std::int64_t>(size(s)));
      be.embedding(d_ids.data(), s.rows, t, s.cols, scale, positions ? d_pos.data() : nullptr, seq_len, out.data());
      // f32: a product and a sum, one rounding each; s8: the two scales' product besides.
      Expected want;
      for (std::int64_t r = 0; r < s.rows; ++r)
        for (int c = 0; c < s.cols; ++c) {
          const std::size_t e = static_cast<std::size_t>(ids[r]) * ld + c;
          const double x = (dtype == DType::f32 ? table[e] : q[e] * static_cast<double>(scales[ids[r]])) * scale,
                       p = positions ? pos[(r % seq_len) * s.cols + c] : 0.0;
          want.add(x + p, (dtype == DType::f32 ? 2 : 4) * kU32 * (std::abs(x) + std::abs(p)));
        }
      want.check(out.host(), "out");
    }
  }
}

void run_embedding_backward(Backend& be) {
  const int vocab = 7;  // ids repeat
  for (Shape s : kShapes) {
    SCOPED_TRACE(str(s));
    const float scale = 1.5f;
    const auto ids = random_ints(s.rows, 45, 0, vocab);
    const auto dout = random_values(size(s), 46), init = random_values(static_cast<std::size_t>(vocab) * s.cols, 47);
    auto d_ids = to_device(be, ids);
    auto d_dout = to_device(be, dout);
    Guarded<float> dtable(be, init);
    be.embedding_backward(d_ids.data(), s.rows, d_dout.data(), s.cols, scale, dtable.data());
    std::vector<double> sum(init.begin(), init.end()), abs_sum(init.size());
    for (std::size_t i = 0; i < init.size(); ++i) abs_sum[i] = std::abs(init[i]);
    for (std::int64_t r = 0; r < s.rows; ++r)
      for (int c = 0; c < s.cols; ++c)
        sum[ids[r] * s.cols + c] += dout[r * s.cols + c] * scale,
            abs_sum[ids[r] * s.cols + c] += std::abs(dout[r * s.cols + c] * scale);
    Expected want;  // float sums of at most rows + 1 terms, each a product rounded once
    for (std::size_t i = 0; i < sum.size(); ++i) want.add(sum[i], (s.rows + 2) * kU32 * abs_sum[i]);
    want.check(dtable.host(), "dtable");
  }
}

void run_positions_backward(Backend& be) {
  struct Case {
    int batch, seq_len, dim;
  };
  for (const Case c : {Case{0, 3, 4}, Case{1, 1, 1}, Case{3, 5, 17}, Case{7, 33, 64}, Case{2, 129, 130}}) {
    SCOPED_TRACE(std::to_string(c.batch) + "x" + std::to_string(c.seq_len) + "x" + std::to_string(c.dim));
    const auto dout = random_values(static_cast<std::size_t>(c.batch) * c.seq_len * c.dim, 48);
    const auto init = random_values(static_cast<std::size_t>(c.seq_len) * c.dim, 49);
    auto d_dout = to_device(be, dout);
    Guarded<float> dpos(be, init);
    be.positions_backward(d_dout.data(), c.batch, c.seq_len, c.dim, dpos.data());
    Expected want;
    for (std::size_t i = 0; i < init.size(); ++i) {
      double sum = init[i], abs_sum = std::abs(init[i]);
      for (int b = 0; b < c.batch; ++b)
        sum += dout[b * init.size() + i], abs_sum += std::abs(dout[b * init.size() + i]);
      want.add(sum, (c.batch + 1) * kU32 * abs_sum);
    }
    want.check(dpos.host(), "dpositions");
  }
}

// ---- Loss and decoding.

// cross_entropy against PyTorch's definition: target distribution q = (1 - ε) on the target + ε / V
// everywhere, loss Σ_j q_j·(lse - x_j), nll lse - x_target, gradient grad_scale·(p - q); rows
// whose target is ignore_id count nothing and get zero gradients. The gradient over the logits
// (grad null), into a separate f32 buffer, or into a bf16 one (rounded); with either of the
// latter the logits stay as they were.
enum class GradInto { logits, f32, bf16 };
void cross_entropy_case(Backend& be, GradInto into) {
  const bool bf16 = into == GradInto::bf16;
  for (std::size_t i = 0; i < kShapes.size(); ++i) {
    const Shape s = kShapes[i];  // rows × vocab
    const float smoothing = i % 2 ? 0.1f : 0.0f, grad_scale = i % 3 ? 0.5f : 1.0f;
    const int ignore_id = i % 2 ? -1 : 0;
    const bool row_nll = i % 3 != 1;
    SCOPED_TRACE(str(s) + " smoothing " + std::to_string(smoothing) + " ignore " + std::to_string(ignore_id));
    const auto logits = random_values(size(s), 50, -4, 4);
    auto targets = random_ints(s.rows, 51, 0, s.cols);
    for (std::int64_t r = 3; r < s.rows; r += 4) targets[r] = ignore_id;
    Guarded<float> d_logits(be, logits), nll(be, s.rows);
    Guarded<Bf16> grad(be, static_cast<std::int64_t>(size(s)));
    Guarded<float> grad32(be, static_cast<std::int64_t>(size(s)));
    auto d_targets = to_device(be, targets);
    void* grad_out = into == GradInto::bf16  ? static_cast<void*>(grad.data())
                     : into == GradInto::f32 ? static_cast<void*>(grad32.data())
                                             : nullptr;
    const LossSums got =
        be.cross_entropy(d_logits.data(), d_targets.data(), s.rows, s.cols, smoothing, ignore_id, grad_scale,
                         row_nll ? nll.data() : nullptr, grad_out, bf16 ? DType::bf16 : DType::f32);
    Expected want_grad, want_nll;
    double loss = 0, nll_sum = 0, loss_tol = 0;
    std::int64_t tokens = 0;
    for (std::int64_t r = 0; r < s.rows; ++r) {
      const float* x = &logits[r * s.cols];
      const testing::Softmax sm = testing::softmax(std::vector<double>(x, x + s.cols));
      // lse off by the sum's relative bound, plus a rounding of each of lse and max|x|
      const double max_abs =
          std::abs(*std::max_element(x, x + s.cols, [](float a, float b) { return std::abs(a) < std::abs(b); }));
      const double row_tol = (s.cols + 16 + 2 * sm.range) * kU32 * (1 + std::abs(sm.lse) + max_abs);
      const bool ignored = targets[r] == ignore_id;
      double row_loss = 0;
      for (int j = 0; j < s.cols; ++j) {
        const double q = (j == targets[r] ? 1 - smoothing : 0.0) + static_cast<double>(smoothing) / s.cols;
        row_loss += q * (sm.lse - x[j]);
        const double g = ignored ? 0.0 : grad_scale * (sm.p[j] - q), tol = grad_scale * (sm.tol[j] + 4 * kU32 * q);
        if (bf16)
          want_grad.add(g, ignored ? 0.0 : kUBf16 * (std::abs(g) + tol) + tol);
        else
          want_grad.add(g, ignored ? 0.0 : tol);
      }
      want_nll.add(ignored ? 0.0 : sm.lse - x[targets[r]], ignored ? 0.0 : row_tol + kU32 * (sm.lse - x[targets[r]]));
      if (ignored) continue;
      loss += row_loss, nll_sum += sm.lse - x[targets[r]], loss_tol += row_tol, ++tokens;
    }
    EXPECT_NEAR(got.loss, loss, loss_tol);
    EXPECT_NEAR(got.nll, nll_sum, loss_tol);
    EXPECT_EQ(got.tokens, tokens);
    if (row_nll) want_nll.check(nll.host(), "row_nll");
    if (into == GradInto::logits) {
      want_grad.check(d_logits.host(), "logits (now the gradient)");
      continue;
    }
    EXPECT_EQ(d_logits.host(), logits) << "the logits stay as they were";
    if (into == GradInto::f32) {
      want_grad.check(grad32.host(), "grad (f32)");
      continue;
    }
    std::vector<float> widened;
    for (Bf16 b : grad.host()) widened.push_back(bf16_value(b));
    want_grad.check(widened, "grad (bf16)");
  }
}
void run_cross_entropy(Backend& be) {
  for (GradInto into : {GradInto::logits, GradInto::f32, GradInto::bf16}) {
    SCOPED_TRACE(into == GradInto::logits ? "gradient over the logits"
                 : into == GradInto::f32  ? "gradient into f32"
                                          : "gradient into bf16");
    cross_entropy_case(be, into);
  }
}

void run_log_softmax(Backend& be) {
  for (Shape s : kShapes) {
    SCOPED_TRACE(str(s));
    const auto x = random_values(size(s), 52, -20, 20);
    Guarded<float> d(be, x);
    be.log_softmax(d.data(), s.rows, s.cols);
    Expected want;
    for (std::int64_t r = 0; r < s.rows; ++r) {
      const testing::Softmax sm = testing::softmax(std::vector<double>(&x[r * s.cols], &x[r * s.cols] + s.cols));
      for (int c = 0; c < s.cols; ++c) {
        const double y = x[r * s.cols + c] - sm.lse;
        want.add(y, (s.cols + 16 + 2 * sm.range) * kU32 + 2 * kU32 * (std::abs(sm.lse) + std::abs(y)));
      }
    }
    want.check(d.host(), "x");
  }
}

// topk against a stable sort (ties: the lower index first), with ties placed on purpose.
void run_topk(Backend& be) {
  for (Shape s : kShapes)
    for (int k : {1, std::min(5, s.cols), s.cols}) {
      SCOPED_TRACE(str(s) + " k = " + std::to_string(k));
      auto x = random_values(size(s), 53);
      for (std::int64_t r = 0; r < s.rows; ++r) {
        for (int c = 4; c < s.cols; c += 4) x[r * s.cols + c] = x[r * s.cols + c / 4];
        if (s.cols > 1) x[r * s.cols] = x[r * s.cols + s.cols - 1] = 2.0f;  // a tie for the top
      }
      auto dx = to_device(be, x);
      Guarded<float> values(be, s.rows * k);
      Guarded<std::int32_t> indices(be, s.rows * k);
      be.topk(dx.data(), s.rows, s.cols, k, values.data(), indices.data());
      Expected want_values, want_indices;
      for (std::int64_t r = 0; r < s.rows; ++r) {
        std::vector<int> order(s.cols);
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(),
                         [&](int a, int b) { return x[r * s.cols + a] > x[r * s.cols + b]; });
        for (int j = 0; j < k; ++j) want_values.add(x[r * s.cols + order[j]]), want_indices.add(order[j]);
      }
      want_values.check(values.host(), "values");
      want_indices.check(indices.host(), "indices");
    }
  SCOPED_TRACE("k = 0 (k <= cols): nothing to write");
  auto dx = to_device(be, random_values(6, 54));
  Guarded<float> values(be, 0);
  Guarded<std::int32_t> indices(be, 0);
  be.topk(dx.data(), 2, 3, 0, values.data(), indices.data());
  values.host();
  indices.host();
}

// dst row r (stride dst_stride) = src row indices[r] (stride src_stride), or row r without
// indices; the floats between rows of dst keep their values.
void run_gather_rows(Backend& be) {
  for (std::size_t i = 0; i < kShapes.size(); ++i) {
    const Shape s = kShapes[i];  // rows × row_floats
    const bool with_indices = i % 2;
    SCOPED_TRACE(str(s) + (with_indices ? " with indices" : " without"));
    const std::int64_t src_rows = std::max<std::int64_t>(s.rows, 9), src_stride = s.cols + 3, dst_stride = s.cols + 2;
    const auto src = random_values(static_cast<std::size_t>(src_rows * src_stride), 55);
    const auto indices = random_ints(s.rows, 56, 0, static_cast<int>(src_rows));
    const auto init = random_values(static_cast<std::size_t>(s.rows * dst_stride), 57);
    auto d_src = to_device(be, src);
    auto d_indices = to_device(be, indices);
    Guarded<float> dst(be, init);
    be.gather_rows(d_src.data(), src_stride, with_indices ? d_indices.data() : nullptr, s.rows, s.cols, dst.data(),
                   dst_stride);
    Expected want;
    for (std::int64_t r = 0; r < s.rows; ++r)
      for (std::int64_t c = 0; c < dst_stride; ++c)
        want.add(c < s.cols ? src[(with_indices ? indices[r] : r) * src_stride + c] : init[r * dst_stride + c]);
    want.check(dst.host(), "dst");
  }
}

// gather_weight_rows: the stored rows of a weight matrix, copied bit for bit in its own type
// (f32, bf16, s8 with its scales and row sums), packed; nothing written beyond.
template <typename T>
void check_gather_weight_rows(Backend& be, DType dtype, Shape s, const std::vector<std::int32_t>& indices,
                              std::int64_t src_rows) {
  const std::int64_t ld = s.cols + 3;
  const auto ints = random_ints(static_cast<std::size_t>(src_rows * ld), 62, -127, 128);
  std::vector<T> src(ints.size());
  for (std::size_t i = 0; i < ints.size(); ++i)
    if constexpr (std::is_same_v<T, float>)
      src[i] = static_cast<float>(ints[i]) / 7.0f;
    else if constexpr (std::is_same_v<T, Bf16>)
      src[i] = static_cast<Bf16>(ints[i] * 131 + 40000);
    else
      src[i] = static_cast<T>(ints[i]);
  const auto scales = random_values(src_rows, 63, 0.001f, 0.1f);
  const auto sums = random_ints(src_rows, 64, -5000, 5000);
  auto d_src = to_device(be, src);
  auto d_scales = to_device(be, scales);
  auto d_sums = to_device(be, sums);
  auto d_indices = to_device(be, indices);
  const MatrixRef ref{d_src.data(), dtype, ld, Trans::Yes, d_scales.data(), d_sums.data()};
  Guarded<T> dst(be, static_cast<std::int64_t>(size(s)));
  Guarded<float> dst_scales(be, s.rows);
  Guarded<std::int32_t> dst_sums(be, s.rows);
  be.gather_weight_rows(ref, d_indices.data(), s.rows, s.cols, dst.data(), dst_scales.data(), dst_sums.data());
  // The scales and sums of f32 and bf16 keep Guarded's fill, bytes 0xFF.
  std::vector<T> want;
  std::vector<float> want_scales(static_cast<std::size_t>(s.rows), std::bit_cast<float>(0xFFFFFFFFu));
  std::vector<std::int32_t> want_sums(static_cast<std::size_t>(s.rows), -1);
  // memcmp of two vectors' bytes; empty vectors (a null data()) are equal without a call.
  const auto same_bytes = [](const auto& x, const auto& y) {
    return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(x[0])) == 0);
  };
  for (std::int64_t r = 0; r < s.rows; ++r) {
    for (int c = 0; c < s.cols; ++c) want.push_back(src[indices[r] * ld + c]);
    if (dtype == DType::s8) want_scales[r] = scales[indices[r]], want_sums[r] = sums[indices[r]];
  }
  const auto got = dst.host();
  EXPECT_TRUE(same_bytes(got, want)) << "rows";
  const auto got_scales = dst_scales.host();
  EXPECT_TRUE(same_bytes(got_scales, want_scales)) << "scales";
  EXPECT_EQ(dst_sums.host(), want_sums) << "row sums";
}

void run_gather_weight_rows(Backend& be) {
  for (Shape s : kShapes) {
    const std::int64_t src_rows = std::max<std::int64_t>(s.rows, 9) + 4;
    auto indices = random_ints(s.rows, 65, 0, static_cast<int>(src_rows));
    if (s.rows > 1) indices[0] = static_cast<std::int32_t>(src_rows - 1), indices[1] = 0;  // the first and last rows
    for (DType dtype : {DType::f32, DType::bf16, DType::s8}) {
      SCOPED_TRACE(str(s) + " " + to_string(dtype));
      if (dtype == DType::f32) check_gather_weight_rows<float>(be, dtype, s, indices, src_rows);
      if (dtype == DType::bf16) check_gather_weight_rows<Bf16>(be, dtype, s, indices, src_rows);
      if (dtype == DType::s8) check_gather_weight_rows<std::int8_t>(be, dtype, s, indices, src_rows);
    }
  }
}

// Adam (Kingma & Ba) with bias correction, in double: g = grad_scale·grad, m = β1·m + (1-β1)·g,
// v = β2·v + (1-β2)·g², param -= lr·m̂ / (√v̂ + eps), m̂ = m / (1 - β1^t), v̂ = v / (1 - β2^t).
// The same pass leaves the gradient all zeros and, where asked (all but the second case), the new
// parameters rounded to bf16: round to nearest even by the bits, of the parameters it wrote;
// without the rounding's buffer nothing past the parameters, moments and gradient is written.
void run_adam(Backend& be) {
  struct Case {
    AdamHyper h;
    bool fresh;  // zero moments (the first step)
  };
  for (const Case c :
       {Case{{0.01f, 0.9f, 0.98f, 1e-9f, 1.0f, 1}, true}, Case{{0.002f, 0.9f, 0.98f, 1e-9f, 0.5f, 7}, false},
        Case{{0.001f, 0.8f, 0.999f, 1e-6f, 1.0f, 1000}, false}})
    for (std::int64_t n : kSizes) {
      SCOPED_TRACE(std::to_string(n) + " parameters, step " + std::to_string(c.h.step));
      const auto p0 = random_values(n, 58), grads = random_values(n, 59);
      auto m0 = random_values(n, 60, -0.5f, 0.5f), v0 = random_values(n, 61, 0, 0.1f);
      for (std::int64_t i = 0; i < n; ++i) v0[i] = c.fresh ? 0 : v0[i] + m0[i] * m0[i];  // v > 0, of m²'s size
      if (c.fresh) std::fill(m0.begin(), m0.end(), 0.0f);
      const bool rounding = c.h.step != 7;  // the second case without the rounding's buffer
      Guarded<float> params(be, p0), m(be, m0), v(be, v0), d_grads(be, grads);
      Guarded<Bf16> rounded(be, n);
      be.adam(params.data(), d_grads.data(), m.data(), v.data(), n, c.h, rounding ? rounded.data() : nullptr);
      EXPECT_EQ(d_grads.host(), std::vector<float>(static_cast<std::size_t>(n), 0.0f)) << "the gradient, zeroed";
      const std::vector<float> new_params = params.host();
      const std::vector<Bf16> got_rounded = rounded.host();
      std::int64_t rounding_wrong = 0;
      for (std::int64_t i = 0; i < n; ++i)
        rounding_wrong += got_rounded[i] != (rounding ? bf16_nearest_even(new_params[i]) : Bf16{0xFFFF});
      EXPECT_EQ(rounding_wrong, 0) << (rounding ? "the bf16 rounding of the new parameters" : "untouched");
      const double b1 = c.h.beta1, b2 = c.h.beta2, t = static_cast<double>(c.h.step);
      Expected want_p, want_m, want_v;
      for (std::int64_t i = 0; i < n; ++i) {
        const double g = static_cast<double>(grads[i]) * c.h.grad_scale;
        const double mi = b1 * m0[i] + (1 - b1) * g, vi = b2 * v0[i] + (1 - b2) * g * g;
        const double tol_m = 4 * kU32 * (std::abs(b1 * m0[i]) + std::abs((1 - b1) * g)), tol_v = 6 * kU32 * vi;
        const double c1 = 1 - std::pow(b1, t), c2 = 1 - std::pow(b2, t), denom = std::sqrt(vi / c2) + c.h.eps;
        const double update = c.h.lr * (mi / c1) / denom;
        want_m.add(mi, tol_m), want_v.add(vi, tol_v);
        // p's rounding (2u: its argument carries the update's error), a few u per float operation of
        // the update, and m's and v's errors carried through
        want_p.add(p0[i] - update, 2 * kU32 * std::abs(p0[i] - update) + 16 * kU32 * std::abs(update) +
                                       c.h.lr * tol_m / c1 / denom + std::abs(update) * tol_v / (2 * vi));
      }
      want_p.check(params.host(), "params");
      want_m.check(m.host(), "m");
      want_v.check(v.host(), "v");
    }
}

// average = decay·average + (1 - decay)·x: hand-worked values, then random ones against double.
void run_moving_average(Backend& be) {
  {
    Guarded<float> average(be, std::vector<float>{1.0f, -2.0f, 0.5f, 0.0f});
    auto x = to_device(be, std::vector<float>{3.0f, 2.0f, 0.5f, -8.0f});
    be.moving_average(average.data(), x.data(), 4, 0.75f);
    EXPECT_EQ(average.host(), (std::vector<float>{1.5f, -1.0f, 0.5f, -2.0f}));
    be.moving_average(average.data(), x.data(), 4, 0.0f);  // decay 0: the average becomes x
    EXPECT_EQ(average.host(), (std::vector<float>{3.0f, 2.0f, 0.5f, -8.0f}));
  }
  for (const float decay : {0.5f, 0.999f, 0.99995f})
    for (std::int64_t n : kSizes) {
      SCOPED_TRACE(std::to_string(n) + " parameters, decay " + std::to_string(decay));
      const auto a0 = random_values(n, 62), x = random_values(n, 63);
      auto d_x = to_device(be, x);
      Guarded<float> average(be, a0);
      be.moving_average(average.data(), d_x.data(), n, decay);
      Expected want;
      for (std::int64_t i = 0; i < n; ++i) {
        const double keep = decay * static_cast<double>(a0[i]), take = (1.0 - decay) * static_cast<double>(x[i]);
        want.add(keep + take, 3 * kU32 * (std::abs(keep) + std::abs(take)));
      }
      want.check(average.host(), "average");
    }
}

// ---- Outside ATTN_BACKEND_OPS: the matrix product and training's attention, declared apart in
// backend.h (their own contracts there), in the table all the same.

// An operand as a product reads it: stored in f32 or bf16 (bf16 ones read as their exact values),
// and the relative error with which the product may read an f32 one (matmul's rule: rounded to
// bf16 with a bf16 operand beside it or on a backend of precision bf16; small products may stay
// float32, so the bounds allow either).
struct Operand {
  std::vector<double> value;
  DeviceBuffer<float> f32;
  DeviceBuffer<Bf16> bf16;
  DType dtype;
  const void* data() const { return dtype == DType::bf16 ? static_cast<const void*>(bf16.data()) : f32.data(); }
};
Operand make_operand(Backend& be, std::size_t n, unsigned seed, DType dtype, float lo = -1, float hi = 1) {
  const auto x = random_values(n, seed, lo, hi);
  std::vector<Bf16> x16(n);
  std::vector<double> value(n);
  for (std::size_t i = 0; i < n; ++i) {
    x16[i] = bf16_nearest_even(x[i]);
    value[i] = dtype == DType::bf16 ? bf16_value(x16[i]) : x[i];
  }
  Operand o{value, DeviceBuffer<float>(be, 0), DeviceBuffer<Bf16>(be, 0), dtype};
  if (dtype == DType::bf16)
    o.bf16 = to_device(be, x16);
  else
    o.f32 = to_device(be, x);
  return o;
}
double read_rounding(Backend& be, DType dtype, DType other) {
  return dtype == DType::f32 && (other == DType::bf16 || be.keeps_bf16_activations()) ? kUBf16 : 0.0;
}

// C = α·op(A)·op(B) + β·C in double from the values as stored: |error| ≤ α·Σ|a·b|·(ra + rb + ra·rb +
// (k + 2)·u) + 2u·(|β·c| + |C|), ra and rb the operands' read_rounding.
struct ProductCase {
  int m, n, k;
  int outer, inner;  // a batch of outer × inner products (1 × 1: a single product, batch null)
};
void run_matmul(Backend& be) {
  const std::vector<ProductCase> cases{{0, 5, 3, 1, 1},       {1, 1, 1, 1, 1}, {7, 33, 17, 1, 1}, {37, 29, 45, 1, 1},
                                       {130, 140, 150, 1, 1}, {5, 3, 0, 1, 1}, {9, 7, 16, 2, 3},  {33, 32, 64, 3, 2}};
  const std::pair<DType, DType> types[] = {
      {DType::f32, DType::f32}, {DType::bf16, DType::f32}, {DType::f32, DType::bf16}, {DType::bf16, DType::bf16}};
  unsigned seed = 300;
  for (const ProductCase& c : cases)
    for (const auto& [ta_type, tb_type] : types)
      for (Trans ta : {Trans::No, Trans::Yes})
        for (Trans tb : {Trans::No, Trans::Yes}) {
          const bool batched = c.outer * c.inner > 1;
          SCOPED_TRACE(std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + " " +
                       to_string(ta_type) + (ta == Trans::Yes ? "ᵀ" : "") + "·" + to_string(tb_type) +
                       (tb == Trans::Yes ? "ᵀ" : "") + (batched ? " batched" : ""));
          const bool at = ta == Trans::Yes, bt = tb == Trans::Yes;
          const int lda = (at ? c.m : c.k) + 3, ldb = (bt ? c.k : c.n) + 1, ldc = c.n + 2;
          const std::int64_t a_size = std::int64_t{at ? c.k : c.m} * lda, b_size = std::int64_t{bt ? c.n : c.k} * ldb,
                             c_size = std::int64_t{c.m} * ldc;
          const int count = c.outer * c.inner;
          // Matrix (o, i) at o·(inner·size) + i·size: the batch's strides.
          const Operand a = make_operand(be, static_cast<std::size_t>(a_size * count), ++seed, ta_type);
          const Operand b = make_operand(be, static_cast<std::size_t>(b_size * count), ++seed, tb_type);
          const auto c0 = random_values(static_cast<std::size_t>(c_size * count), ++seed);
          Guarded<float> out(be, c0);
          const float alpha = 0.75f, beta = batched ? 0.0f : 0.5f;
          const GemmBatch batch{c.outer,          c.inner, a_size * c.inner, a_size,
                                b_size * c.inner, b_size,  c_size * c.inner, c_size};
          be.matmul(c.m, c.n, c.k, alpha, MatrixRef{a.data(), ta_type, lda, ta}, MatrixRef{b.data(), tb_type, ldb, tb},
                    beta, out.data(), ldc, batched ? &batch : nullptr);
          const double ra = read_rounding(be, ta_type, tb_type), rb = read_rounding(be, tb_type, ta_type);
          const double rel = ra + rb + ra * rb + (c.k + 2) * kU32;
          Expected want;
          for (int e = 0; e < count; ++e)
            for (int i = 0; i < c.m; ++i)
              for (int j = 0; j < ldc; ++j) {
                const double before = c0[e * c_size + std::int64_t{i} * ldc + j];
                if (j >= c.n) {  // the padding between rows of C: never written
                  want.add(before);
                  continue;
                }
                double sum = 0, magnitude = 0;
                for (int p = 0; p < c.k; ++p) {
                  const double x = a.value[e * a_size + (at ? std::int64_t{p} * lda + i : std::int64_t{i} * lda + p)];
                  const double y = b.value[e * b_size + (bt ? std::int64_t{j} * ldb + p : std::int64_t{p} * ldb + j)];
                  sum += x * y;
                  magnitude += std::abs(x * y);
                }
                const double result = alpha * sum + beta * before;
                want.add(result, alpha * magnitude * rel + 2 * kU32 * (std::abs(beta * before) + std::abs(result)));
              }
          want.check(out.host(), "C");
        }
  // f32 × s8: A's rows quantized on the fly to 8 bits (7 without VNNI) with a scale and a zero point
  // each, so an element of A is read within a step of its row's range/127; B = scales · q exactly.
  for (const ProductCase& c : std::vector<ProductCase>{{1, 1, 1, 1, 1}, {7, 33, 17, 1, 1}, {64, 200, 96, 1, 1}}) {
    SCOPED_TRACE(std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + " f32·s8ᵀ");
    const int lda = c.k + 3, ldb = c.k + 1, ldc = c.n + 2;
    const auto a = random_values(static_cast<std::size_t>(c.m) * lda, ++seed, -2, 1);
    const auto q = random_ints(static_cast<std::size_t>(c.n) * ldb, ++seed, -127, 128);
    const std::vector<std::int8_t> q8(q.begin(), q.end());
    const auto scales = random_values(c.n, ++seed, 0.001f, 0.1f);
    std::vector<std::int32_t> sums(c.n);
    for (int j = 0; j < c.n; ++j) sums[j] = std::accumulate(&q[j * ldb], &q[j * ldb] + c.k, 0);
    auto d_a = to_device(be, a), d_scales = to_device(be, scales);
    auto d_sums = to_device(be, sums);
    auto d_q = to_device(be, q8);
    const auto c0 = random_values(static_cast<std::size_t>(c.m) * ldc, ++seed);
    Guarded<float> out(be, c0);
    be.matmul(c.m, c.n, c.k, 0.75f, f32_matrix(d_a.data(), lda),
              s8_matrix(d_q.data(), d_scales.data(), d_sums.data(), ldb, Trans::Yes), 0.5f, out.data(), ldc, nullptr);
    Expected want;
    for (int i = 0; i < c.m; ++i) {
      double lo = 0, hi = 0;
      for (int p = 0; p < c.k; ++p)
        lo = std::min<double>(lo, a[i * lda + p]), hi = std::max<double>(hi, a[i * lda + p]);
      const double step = (hi - lo) / 127;
      for (int j = 0; j < ldc; ++j) {
        const double before = c0[i * ldc + j];
        if (j >= c.n) {
          want.add(before);
          continue;
        }
        double sum = 0, weights = 0, magnitude = 0;
        for (int p = 0; p < c.k; ++p) {
          const double w = q[j * ldb + p] * static_cast<double>(scales[j]);
          sum += a[i * lda + p] * w;
          weights += std::abs(w);
          magnitude += std::abs(a[i * lda + p] * w);
        }
        const double result = 0.75 * sum + 0.5 * before;
        want.add(result, 0.75 * (step * weights + 8 * kU32 * magnitude) +
                             2 * kU32 * (std::abs(0.5 * before) + std::abs(result)));
      }
    }
    want.check(out.host(), "C");
  }
}

// Training's attention over kSoftmaxCases' masks (queries, keys, padding, causal with an offset,
// windows), q, k and v stored in f32 or bf16 with padded rows, against double:
//   scores s = scale·q·kᵀ within δ = scale·Σ|q·k|·(2r + (d_k + 2)·u) (r: read_rounding of a float
//   operand), so p within softmax's bound + p·(e^{2δ} − 1); ctx = p·v within Σ|tol_p·v| +
//   Σ|p·v|·(2r + (keys + 2)·u) (the probabilities rounded to bf16 where the product rounds).
// The backward from the reference's probabilities (rounded to float) and a random ∂ctx, each
// product within the same kind of bound carried through: ∂v = pᵀ·∂ctx, ∂p = ∂ctx·vᵀ, ∂s =
// scale·p∘(∂p − Σ p∘∂p), ∂q = ∂s·k, ∂k = ∂sᵀ·q.
struct AttentionData {
  AttentionBlocks blocks;
  Operand q, k, v;
  int ld;
};
AttentionData attention_data(Backend& be, const SoftmaxCase& c, int d_k, int d_v, DType dtype, unsigned seed) {
  const int ld = c.heads * std::max(d_k, d_v) + 3;
  const std::size_t q_n = static_cast<std::size_t>(c.batch) * c.tq * ld,
                    k_n = static_cast<std::size_t>(c.batch) * c.tk * ld;
  AttentionData d{{},
                  make_operand(be, q_n, seed, dtype, -2, 2),
                  make_operand(be, k_n, seed + 1, dtype, -2, 2),
                  make_operand(be, k_n, seed + 2, dtype),
                  ld};
  AttentionBlocks& a = d.blocks;
  a.batch = c.batch, a.heads = c.heads, a.d_k = d_k, a.d_v = d_v, a.queries = c.tq, a.keys = c.tk;
  a.q = MatrixRef{d.q.data(), dtype, ld, Trans::No};
  a.k = MatrixRef{d.k.data(), dtype, ld, Trans::No};
  a.v = MatrixRef{d.v.data(), dtype, ld, Trans::No};
  a.q_stride = std::int64_t{c.tq} * ld, a.k_stride = a.v_stride = std::int64_t{c.tk} * ld;
  return d;
}

void attention_case(Backend& be, bool backward) {
  unsigned seed = 400;
  for (const SoftmaxCase& c : kSoftmaxCases)
    // (d_k 260: beyond kMaxSmallGemm, the batched route)
    for (const auto& [d_k, d_v] : {std::pair{8, 8}, std::pair{16, 5}, std::pair{64, 64}, std::pair{260, 3}})
      for (DType dtype : {DType::f32, DType::bf16}) {
        SCOPED_TRACE(std::to_string(c.batch) + "x" + std::to_string(c.heads) + "x" + std::to_string(c.tq) + "x" +
                     std::to_string(c.tk) + (c.causal ? " causal" : "") + " window " + std::to_string(c.window) +
                     " d_k " + std::to_string(d_k) + " d_v " + std::to_string(d_v) + " " + to_string(dtype));
        seed += 3;
        const AttentionData d = attention_data(be, c, d_k, d_v, dtype, seed);
        const AttentionBlocks& a = d.blocks;
        auto lengths = to_device(be, c.lengths);
        const AttentionMask mask{c.lengths.empty() ? nullptr : lengths.data(), c.causal, c.offset, c.window};
        const double scale = 1 / std::sqrt(static_cast<double>(d_k));
        const double r = read_rounding(be, DType::f32, dtype);  // operands and intermediates alike
        const std::size_t ctx_n = static_cast<std::size_t>(c.batch) * c.tq * c.heads * d_v;
        // The reference, block by block.
        std::vector<double> p(a.probs_size()), p_tol(a.probs_size()), ctx(ctx_n), ctx_tol(ctx_n);
        auto q_at = [&](int b, int t, int h, int e) {
          return d.q.value[(std::int64_t{b} * c.tq + t) * d.ld + h * d_k + e];
        };
        auto k_at = [&](int b, int j, int h, int e) {
          return d.k.value[(std::int64_t{b} * c.tk + j) * d.ld + h * d_k + e];
        };
        auto v_at = [&](int b, int j, int h, int e) {
          return d.v.value[(std::int64_t{b} * c.tk + j) * d.ld + h * d_v + e];
        };
        auto p_index = [&](int b, int h, int t, int j) {
          return ((std::int64_t{b} * c.heads + h) * c.tq + t) * c.tk + j;
        };
        auto ctx_index = [&](int b, int t, int h, int e) {
          return (std::int64_t{b} * c.tq + t) * c.heads * d_v + h * d_v + e;
        };
        for (int b = 0; b < c.batch; ++b)
          for (int h = 0; h < c.heads; ++h)
            for (int t = 0; t < c.tq; ++t) {
              const int pos = t + c.offset;
              std::vector<int> keys;
              for (int j = 0; j < c.tk; ++j)
                if ((c.lengths.empty() || j < c.lengths[b]) && (!c.causal || j <= pos) &&
                    (c.window == 0 || std::abs(pos - j) <= c.window))
                  keys.push_back(j);
              std::vector<double> s;
              double delta = 0;
              for (int j : keys) {
                double dot = 0, mag = 0;
                for (int e = 0; e < d_k; ++e)
                  dot += q_at(b, t, h, e) * k_at(b, j, h, e), mag += std::abs(q_at(b, t, h, e) * k_at(b, j, h, e));
                s.push_back(scale * dot);
                delta = std::max(delta, scale * mag * (2 * r + r * r + (d_k + 2) * kU32));
              }
              const testing::Softmax sm = testing::softmax(s);
              for (std::size_t i = 0; i < keys.size(); ++i) {
                p[p_index(b, h, t, keys[i])] = sm.p[i];
                p_tol[p_index(b, h, t, keys[i])] = sm.tol[i] + sm.p[i] * std::expm1(2 * delta);
              }
              for (int e = 0; e < d_v; ++e) {
                double sum = 0, tol = 0;
                for (std::size_t i = 0; i < keys.size(); ++i) {
                  const double v = v_at(b, keys[i], h, e);
                  sum += sm.p[i] * v;
                  tol += p_tol[p_index(b, h, t, keys[i])] * std::abs(v) +
                         sm.p[i] * std::abs(v) * (2 * r + r * r + (keys.size() + 2) * kU32);
                }
                ctx[ctx_index(b, t, h, e)] = sum;
                ctx_tol[ctx_index(b, t, h, e)] = tol;
              }
            }
        if (!backward) {
          Guarded<float> probs(be, a.probs_size()), out(be, static_cast<std::int64_t>(ctx_n));
          be.attention(a, mask, probs.data(), out.data(), nullptr);
          Expected want_p, want_ctx;
          for (std::size_t i = 0; i < p.size(); ++i) want_p.add(p[i], p_tol[i]);  // masked: exactly 0
          for (std::size_t i = 0; i < ctx.size(); ++i) want_ctx.add(ctx[i], ctx_tol[i]);
          const std::vector<float> got_p = probs.host(), got_ctx = out.host();
          want_p.check(got_p, "probs");
          want_ctx.check(got_ctx, "ctx");
          // The context asked for in bf16: the same probabilities, the context rounded as an
          // independent rule rounds the float one (the float buffer scratch).
          Guarded<float> probs2(be, a.probs_size()), scratch(be, static_cast<std::int64_t>(ctx_n));
          Guarded<Bf16> ctx16(be, static_cast<std::int64_t>(ctx_n));
          be.attention(a, mask, probs2.data(), scratch.data(), ctx16.data());
          EXPECT_EQ(probs2.host(), got_p) << "probs with the context rounded";
          const std::vector<Bf16> got16 = ctx16.host();
          scratch.host();  // (its guards)
          for (std::size_t i = 0; i < ctx_n; ++i)
            ASSERT_EQ(got16[i], testing::bf16_bits(got_ctx[i])) << "ctx rounded, element " << i;
          continue;
        }
        // Backward, from the reference's probabilities as floats.
        std::vector<float> p32(p.begin(), p.end());
        const auto dctx = random_values(ctx_n, seed + 7);
        auto d_p = to_device(be, p32), d_dctx = to_device(be, dctx);
        const std::size_t q_n = d.q.value.size(), k_n = d.k.value.size();
        // ∂q, ∂k, ∂v are laid out like q, k and v: the heads' elements written, the rest left alone.
        const auto q0 = random_values(q_n, seed + 8), k0 = random_values(k_n, seed + 9),
                   v0 = random_values(k_n, seed + 10);
        Guarded<float> dq(be, q0), dk(be, k0), dv(be, v0), dscores(be, a.probs_size());
        be.attention_backward(a, d_p.data(), d_dctx.data(), dscores.data(), dq.data(), dk.data(), dv.data(), nullptr);
        std::vector<double> want_dq(q0.begin(), q0.end()), tol_dq(q_n, 0), want_dk(k0.begin(), k0.end()),
            tol_dk(k_n, 0), want_dv(v0.begin(), v0.end()), tol_dv(k_n, 0);
        const double rp = 2 * r + r * r;  // two operands read rounded
        for (int b = 0; b < c.batch; ++b)
          for (int h = 0; h < c.heads; ++h) {
            // ∂s and its error bound per (t, j).
            std::vector<double> ds(std::size_t(c.tq) * c.tk, 0), ds_tol(std::size_t(c.tq) * c.tk, 0);
            for (int t = 0; t < c.tq; ++t) {
              std::vector<double> dp(c.tk, 0), dp_tol(c.tk, 0);
              double dot = 0, dot_tol = 0, dot_mag = 0;
              for (int j = 0; j < c.tk; ++j) {
                const double pj = p32[p_index(b, h, t, j)];
                double mag = 0;
                for (int e = 0; e < d_v; ++e) {
                  dp[j] += dctx[ctx_index(b, t, h, e)] * v_at(b, j, h, e);
                  mag += std::abs(dctx[ctx_index(b, t, h, e)] * v_at(b, j, h, e));
                }
                dp_tol[j] = mag * (rp + (d_v + 2) * kU32);
                dot += pj * dp[j], dot_tol += pj * dp_tol[j], dot_mag += std::abs(pj * dp[j]);
              }
              for (int j = 0; j < c.tk; ++j) {
                const double pj = p32[p_index(b, h, t, j)];
                const std::size_t i = std::size_t(t) * c.tk + j;
                ds[i] = scale * pj * (dp[j] - dot);
                ds_tol[i] = scale * pj * (dp_tol[j] + dot_tol + (std::abs(dp[j]) + dot_mag) * (c.tk + 8) * kU32) +
                            r * std::abs(ds[i]);  // ∂s rounded to bf16 where its products round it
              }
            }
            for (int t = 0; t < c.tq; ++t)
              for (int e = 0; e < d_k; ++e) {
                double sum = 0, tol = 0;
                for (int j = 0; j < c.tk; ++j) {
                  const std::size_t i = std::size_t(t) * c.tk + j;
                  sum += ds[i] * k_at(b, j, h, e);
                  tol += ds_tol[i] * std::abs(k_at(b, j, h, e)) +
                         std::abs(ds[i] * k_at(b, j, h, e)) * (rp + (c.tk + 2) * kU32);
                }
                const std::size_t at = (std::size_t(b) * c.tq + t) * d.ld + h * d_k + e;
                want_dq[at] = sum, tol_dq[at] = tol;
              }
            for (int j = 0; j < c.tk; ++j) {
              for (int e = 0; e < d_k; ++e) {
                double sum = 0, tol = 0;
                for (int t = 0; t < c.tq; ++t) {
                  const std::size_t i = std::size_t(t) * c.tk + j;
                  sum += ds[i] * q_at(b, t, h, e);
                  tol += ds_tol[i] * std::abs(q_at(b, t, h, e)) +
                         std::abs(ds[i] * q_at(b, t, h, e)) * (rp + (c.tq + 2) * kU32);
                }
                const std::size_t at = (std::size_t(b) * c.tk + j) * d.ld + h * d_k + e;
                want_dk[at] = sum, tol_dk[at] = tol;
              }
              for (int e = 0; e < d_v; ++e) {
                double sum = 0, mag = 0;
                for (int t = 0; t < c.tq; ++t) {
                  const double term = p32[p_index(b, h, t, j)] * dctx[ctx_index(b, t, h, e)];
                  sum += term, mag += std::abs(term);
                }
                const std::size_t at = (std::size_t(b) * c.tk + j) * d.ld + h * d_v + e;
                want_dv[at] = sum, tol_dv[at] = mag * (rp + (c.tq + 2) * kU32);
              }
            }
          }
        Expected wq, wk, wv;
        for (std::size_t i = 0; i < q_n; ++i) wq.add(want_dq[i], tol_dq[i]);
        for (std::size_t i = 0; i < k_n; ++i) wk.add(want_dk[i], tol_dk[i]), wv.add(want_dv[i], tol_dv[i]);
        const std::vector<float> got_dq = dq.host(), got_dk = dk.host(), got_dv = dv.host();
        wq.check(got_dq, "dq");
        wk.check(got_dk, "dk");
        wv.check(got_dv, "dv");
        // Asked for in bf16 with the biases' gradients: each gradient the independent rounding of
        // the float one's, the elements outside the heads untouched; each bias gradient added the
        // column sums of its gradient over all rows (in float: within (rows + 2)·u of Σ|x|).
        Guarded<float> sq(be, static_cast<std::int64_t>(q_n)), sk(be, static_cast<std::int64_t>(k_n)),
            sv(be, static_cast<std::int64_t>(k_n)), dscores2(be, a.probs_size());
        Guarded<Bf16> rq(be, static_cast<std::int64_t>(q_n)), rk(be, static_cast<std::int64_t>(k_n)),
            rv(be, static_cast<std::int64_t>(k_n));
        const int hk = c.heads * d_k, hv = c.heads * d_v;
        const auto bq0 = random_values(hk, seed + 11), bk0 = random_values(hk, seed + 12),
                   bv0 = random_values(hv, seed + 13);
        Guarded<float> bq(be, bq0), bk(be, bk0), bv(be, bv0);
        const RoundedAttentionGradients rounded{rq.data(), rk.data(), rv.data(), bq.data(), bk.data(), bv.data()};
        be.attention_backward(a, d_p.data(), d_dctx.data(), dscores2.data(), sq.data(), sk.data(), sv.data(), &rounded);
        sq.host(), sk.host(), sv.host(), dscores2.host();  // (their guards; the contents are scratch)
        const auto check_rounded = [&](const std::vector<Bf16>& got16, const std::vector<float>& f32, int rows,
                                       int cols, const std::vector<float>& bias0, const std::vector<float>& bias,
                                       const char* what) {
          SCOPED_TRACE(what);
          for (std::size_t i = 0; i < got16.size(); ++i) {
            const bool head = static_cast<int>(i % d.ld) < cols;
            ASSERT_EQ(got16[i], head ? testing::bf16_bits(f32[i]) : Bf16{0xFFFF}) << "element " << i;
          }
          for (int col = 0; col < cols; ++col) {
            double sum = bias0[col], mag = std::abs(bias0[col]);
            for (int row = 0; row < rows; ++row) {
              const double x = f32[static_cast<std::size_t>(row) * d.ld + col];
              sum += x, mag += std::abs(x);
            }
            EXPECT_NEAR(bias[col], sum, mag * (rows + 2) * kU32) << "bias gradient, column " << col;
          }
        };
        check_rounded(rq.host(), got_dq, c.batch * c.tq, hk, bq0, bq.host(), "dq");
        check_rounded(rk.host(), got_dk, c.batch * c.tk, hk, bk0, bk.host(), "dk");
        check_rounded(rv.host(), got_dv, c.batch * c.tk, hv, bv0, bv.host(), "dv");
        // ∂ctx given in bf16 (RoundedAttentionGradients::dctx, as the output projection's product
        // rounds it where the backend keeps bf16 activations, whose products round it so anyway):
        // the same bits as the call given the float ∂ctx of those rounded values, the float dctx
        // not read (null). (A float backend's products of two float operands do not round: it is
        // never given one.)
        if (!be.keeps_bf16_activations()) continue;
        std::vector<Bf16> dctx16(ctx_n);
        std::vector<float> dctx_rounded(ctx_n);
        for (std::size_t i = 0; i < ctx_n; ++i)
          dctx16[i] = testing::bf16_bits(dctx[i]), dctx_rounded[i] = bf16_value(dctx16[i]);
        auto d_dctx16 = to_device(be, dctx16);
        auto d_dctx_rounded = to_device(be, dctx_rounded);
        const auto rounded_call = [&](const float* dctx_f32, const Bf16* dctx_bf16) {
          Guarded<float> fq(be, static_cast<std::int64_t>(q_n)), fk(be, static_cast<std::int64_t>(k_n)),
              fv(be, static_cast<std::int64_t>(k_n)), ds(be, a.probs_size());
          Guarded<Bf16> gq(be, static_cast<std::int64_t>(q_n)), gk(be, static_cast<std::int64_t>(k_n)),
              gv(be, static_cast<std::int64_t>(k_n));
          Guarded<float> cq(be, bq0), ck(be, bk0), cv(be, bv0);
          RoundedAttentionGradients r{gq.data(), gk.data(), gv.data(), cq.data(), ck.data(), cv.data()};
          r.dctx = dctx_bf16;
          be.attention_backward(a, d_p.data(), dctx_f32, ds.data(), fq.data(), fk.data(), fv.data(), &r);
          fq.host(), fk.host(), fv.host(), ds.host();  // (their guards)
          return std::make_tuple(gq.host(), gk.host(), gv.host(), cq.host(), ck.host(), cv.host());
        };
        const auto from_float = rounded_call(d_dctx_rounded.data(), nullptr);
        const auto from_bf16 = rounded_call(nullptr, d_dctx16.data());
        EXPECT_EQ(std::get<0>(from_bf16), std::get<0>(from_float)) << "dq from a bf16 dctx";
        EXPECT_EQ(std::get<1>(from_bf16), std::get<1>(from_float)) << "dk from a bf16 dctx";
        EXPECT_EQ(std::get<2>(from_bf16), std::get<2>(from_float)) << "dv from a bf16 dctx";
        for (int g = 0; g < 3; ++g) {
          const std::vector<float>& got = g == 0   ? std::get<3>(from_bf16)
                                          : g == 1 ? std::get<4>(from_bf16)
                                                   : std::get<5>(from_bf16);
          const std::vector<float>& want = g == 0   ? std::get<3>(from_float)
                                           : g == 1 ? std::get<4>(from_float)
                                                    : std::get<5>(from_float);
          ASSERT_EQ(got.size(), want.size());
          for (std::size_t i = 0; i < got.size(); ++i)
            ASSERT_EQ(std::bit_cast<std::uint32_t>(got[i]), std::bit_cast<std::uint32_t>(want[i]))
                << "bias gradient " << g << " from a bf16 dctx, element " << i;
        }
      }
}
void run_attention(Backend& be) { attention_case(be, false); }
void run_attention_backward(Backend& be) { attention_case(be, true); }

// ---- The table.

struct OpCase {
  const char* name;       // the test's name
  const char* op;         // the operation's name in ATTN_BACKEND_OPS
  const char* overload;   // a piece of its parameter list that tells overloads apart ("" for none)
  const char* tolerance;  // how close to the reference, and why (u = 2^-24)
  void (*run)(Backend&);
};
void PrintTo(const OpCase& c, std::ostream* os) { *os << c.name; }
#define OP_CASE(op, tolerance) \
  OpCase { #op, #op, "", tolerance, run_##op }

const OpCase kCases[] = {
    OP_CASE(copy_to_device, "exact bytes"),
    OP_CASE(copy_to_host, "exact bytes"),
    OP_CASE(copy, "exact bytes"),
    OP_CASE(fill, "exact bits"),
    OP_CASE(to_bf16, "exact bits of round to nearest even by the bits (any NaN for a NaN)"),
    OP_CASE(quantize_rows,
            "scale one rounding of max|x|/127; q exact (half away from zero), ±1 only where float "
            "x/scale can cross a tie; sums exact"),
    OP_CASE(add, "exact: one float32 rounding"),
    OP_CASE(accumulate, "exact: one float32 rounding"),
    OP_CASE(scale, "exact: one float32 rounding"),
    OP_CASE(add_bias, "exact: one float32 rounding"),
    OP_CASE(add_bias_relu, "exact: one float32 rounding"),
    OP_CASE(relu_backward, "exact (a selection), y in f32 and in bf16"),
    OP_CASE(bias_grad,
            "a float32 sum: (rows + 1)·u·Σ|terms|; the copy of dy exact bits (f32, bf16 to nearest even), "
            "ReLU's mask exact"),
    OP_CASE(sum_squares, "a double sum: (n + 1)·2^-53·Σx²"),
    OP_CASE(dropout, "kept elements 4u from x/(1-p); masks exactly equal; kept count within 5 sigma"),
    OP_CASE(layernorm, "float32 row sums: (cols + 8)·u relative to the terms"),
    OP_CASE(layernorm_backward, "(cols + 8)·u for dx, (rows + 8)·u for dgamma and dbeta"),
    OP_CASE(cached_attention,
            "softmax's bound plus float dot products' (d_k + 2)·u; ctx the weights' errors times "
            "|v|; masked entries exactly 0"),
    OP_CASE(embedding, "f32 table 2u, s8 table 4u, of |table·scale| + |position|"),
    OP_CASE(embedding_backward, "float32 sums: (n + 2)·u·Σ|terms|"),
    OP_CASE(positions_backward, "float32 sums: (batch + 1)·u·Σ|terms|"),
    OP_CASE(cross_entropy,
            "softmax's bound on p; a row's loss (V + 16 + 2·range)·u·(1 + |lse| + max|x|); a bf16 gradient 2^-8 "
            "relatively besides"),
    OP_CASE(log_softmax, "(cols + 16 + 2·range)·u + 2u·(|lse| + |y|)"),
    OP_CASE(topk, "exact values and indices"),
    OP_CASE(gather_rows, "exact"),
    OP_CASE(gather_weight_rows, "exact bits (f32, bf16, s8 with scales and row sums)"),
    OP_CASE(adam, "m 4u, v 6u; params 2u·|params| + 16u·|update| + m's and v's errors carried"),
    OP_CASE(moving_average, "3u·(|decay·average| + |(1 - decay)·x|)"),
    // Declared outside ATTN_BACKEND_OPS (kOutsideTheList below).
    OP_CASE(matmul,
            "α·Σ|a·b|·(ra + rb + ra·rb + (k + 2)·u), r = 2^-8 for a float operand read in bf16; s8: a step of "
            "A's row range/127 times Σ|w|"),
    OP_CASE(attention,
            "p: softmax's bound and e^{2δ} - 1 for the scores' error δ; ctx: p's error times |v| and the "
            "product's rounding"),
    OP_CASE(attention_backward, "each product's rounding (bf16 where it rounds) carried through ∂p, ∂s, ∂q, ∂k, ∂v"),
};
#undef OP_CASE

// The operations of ATTN_BACKEND_OPS: name and parameter list, overloads apart.
struct OpSignature {
  const char* name;
  const char* params;
};
#define ATTN_OP_SIGNATURE(ret, name, params, args) OpSignature{#name, #params},
// The operations backend.h declares apart from the list (each a pure virtual of Backend too).
const OpSignature kOps[] = {ATTN_BACKEND_OPS(ATTN_OP_SIGNATURE) OpSignature{"matmul", "(m, n, k, a, b, batch)"},
                            OpSignature{"attention", "(a, mask, probs, ctx)"},
                            OpSignature{"attention_backward", "(a, probs, dctx, dscores, dq, dk, dv, rounded)"}};
#undef ATTN_OP_SIGNATURE

bool covers(const OpCase& c, const OpSignature& op) {
  return std::string(c.op) == op.name && std::string(op.params).find(c.overload) != std::string::npos;
}

TEST(BackendOpsTable, EveryOperationHasExactlyOneCase) {
  for (const OpSignature& op : kOps) {
    const auto n = std::count_if(std::begin(kCases), std::end(kCases), [&](const OpCase& c) { return covers(c, op); });
    EXPECT_EQ(n, 1) << op.name << op.params << (n ? " has several cases" : " has no case in kCases");
  }
  for (const OpCase& c : kCases) {
    const auto n =
        std::count_if(std::begin(kOps), std::end(kOps), [&](const OpSignature& op) { return covers(c, op); });
    EXPECT_EQ(n, 1) << "case " << c.name << " matches " << n << " operations of ATTN_BACKEND_OPS";
  }
}

// Tolerances: the softmax (n + 16 + 2·range)·u relatively, masked entries exactly 0; its gradient
// (tk + 8)·u·scale·p·(|dp| + Σ|dp·p|).
TEST(CpuAttentionSoftmax, AgainstScalarReference) { run_attention_softmax(cpu_backend()); }
TEST(CpuAttentionSoftmax, BackwardAgainstScalarReference) { run_attention_softmax_backward(cpu_backend()); }

class BackendOps : public ::testing::TestWithParam<std::tuple<Backend*, OpCase>> {};

TEST_P(BackendOps, AgainstScalarReference) {
  const auto& [be, c] = GetParam();
  SCOPED_TRACE(std::string(c.name) + ", tolerance: " + c.tolerance);
  c.run(*be);
}

INSTANTIATE_TEST_SUITE_P(Backends, BackendOps,
                         ::testing::Combine(::testing::ValuesIn(testing::all_backends()), ::testing::ValuesIn(kCases)),
                         [](const auto& info) {
                           return std::get<0>(info.param)->name() + "_" + std::get<1>(info.param).name;
                         });

}  // namespace
}  // namespace attn
