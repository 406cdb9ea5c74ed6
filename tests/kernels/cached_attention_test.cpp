// cached_attention against attention written out from its definition in double precision:
// each row's positions gathered through the table of cached rows (a permuted, shared history,
// as beam search leaves it), the key-length mask per cached row, the restricted-attention
// window, and a hand-worked two-key example.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include <gtest/gtest.h>

#include "common/backends.h"
#include "common/device_vector.h"

namespace attn {
namespace {

using testing::random_values;

class CachedAttentionTest : public ::testing::TestWithParam<Backend*> {};

struct Case {
  int rows, heads, d_k, d_v, cached_rows, keys;
  std::int64_t rows_of_stride;            // 0: one cached row per row
  std::vector<std::int32_t> rows_of;      // host
  std::vector<std::int32_t> key_lengths;  // per cached row; empty: none
  int query_position = 0, window = 0;
};

// Runs the kernel, and checks probs and ctx against the definition.
void check(Backend& be, const Case& c, unsigned seed) {
  const int width = c.heads * (c.d_k + c.d_v);
  const int ld_q = c.heads * c.d_k + 3;  // a query row stride wider than the queries
  const std::int64_t row_stride = static_cast<std::int64_t>(c.keys) * width + 5;
  const auto q = random_values(static_cast<std::size_t>(c.rows) * ld_q, seed, -2, 2);
  const auto cache = random_values(static_cast<std::size_t>(c.cached_rows * row_stride), seed + 1, -2, 2);
  auto dq = testing::to_device(be, q);
  auto dcache = testing::to_device(be, cache);
  auto drows_of = testing::to_device(be, c.rows_of);
  DeviceBuffer<std::int32_t> dlengths(be, std::max<std::size_t>(1, c.key_lengths.size()));
  if (!c.key_lengths.empty())
    be.copy_to_device(dlengths.data(), c.key_lengths.data(), c.key_lengths.size() * sizeof(std::int32_t));
  DeviceBuffer<float> probs(be, static_cast<std::size_t>(c.rows) * c.heads * c.keys);
  DeviceBuffer<float> ctx(be, static_cast<std::size_t>(c.rows) * c.heads * c.d_v);
  be.fill(probs.data(), static_cast<std::int64_t>(probs.size()), 7.0f);  // every entry must be written
  CachedAttention a;
  a.rows = c.rows, a.heads = c.heads, a.d_k = c.d_k, a.d_v = c.d_v;
  a.q = dq.data(), a.ld_q = ld_q;
  a.cache = dcache.data(), a.row_stride = row_stride, a.ld_cache = width;
  a.rows_of = drows_of.data(), a.rows_of_stride = c.rows_of_stride;
  a.keys = c.keys;
  a.key_lengths = c.key_lengths.empty() ? nullptr : dlengths.data();
  a.query_position = c.query_position, a.window = c.window;
  be.cached_attention(a, probs.data(), ctx.data());
  const auto got_probs = testing::to_host(be, probs), got_ctx = testing::to_host(be, ctx);

  for (int r = 0; r < c.rows; ++r)
    for (int h = 0; h < c.heads; ++h) {
      auto cached_row = [&](int p) { return c.rows_of[c.rows_of_stride ? r * c.rows_of_stride + p : r]; };
      int lo = 0, hi = c.keys;
      if (!c.key_lengths.empty()) hi = std::min(hi, c.key_lengths[cached_row(0)]);
      if (c.window > 0)
        lo = std::max(0, c.query_position - c.window), hi = std::min(hi, c.query_position + c.window + 1);
      std::vector<double> p(c.keys, 0.0);
      double max = -INFINITY, sum = 0;
      for (int k = lo; k < hi; ++k) {
        const float* key = cache.data() + cached_row(k) * row_stride + static_cast<std::int64_t>(k) * width + h * c.d_k;
        double s = 0;
        for (int i = 0; i < c.d_k; ++i) s += static_cast<double>(q[r * ld_q + h * c.d_k + i]) * key[i];
        p[k] = s / std::sqrt(static_cast<double>(c.d_k));
        max = std::max(max, p[k]);
      }
      for (int k = lo; k < hi; ++k) sum += p[k] = std::exp(p[k] - max);
      for (int k = lo; k < hi; ++k) p[k] /= sum;
      for (int k = 0; k < c.keys; ++k) {
        const float got = got_probs[(static_cast<std::size_t>(r) * c.heads + h) * c.keys + k];
        if (k < lo || k >= hi)
          EXPECT_EQ(got, 0.0f) << "row " << r << " head " << h << " masked key " << k;
        else
          EXPECT_NEAR(got, p[k], 2e-6 + 2e-5 * p[k]) << "row " << r << " head " << h << " key " << k;
      }
      for (int i = 0; i < c.d_v; ++i) {
        double want = 0;
        for (int k = lo; k < hi; ++k)
          want += p[k] * cache[cached_row(k) * row_stride + static_cast<std::int64_t>(k) * width + c.heads * c.d_k +
                               h * c.d_v + i];
        EXPECT_NEAR(got_ctx[(static_cast<std::size_t>(r) * c.heads + h) * c.d_v + i], want, 2e-5)
            << "row " << r << " head " << h << " element " << i;
      }
    }
}

TEST_P(CachedAttentionTest, TwoKeysByHand) {
  Backend& be = *GetParam();
  // One head, d_k = d_v = 1 (scale 1): query 1, keys ln 3 and 0: weights 3/4 and 1/4; values 8 and 4: 7.
  const std::vector<float> q{1.0f};
  const std::vector<float> cache{std::log(3.0f), 8.0f, 0.0f, 4.0f};
  auto dq = testing::to_device(be, q);
  auto dcache = testing::to_device(be, cache);
  auto rows_of = testing::to_device(be, std::vector<std::int32_t>{0});
  DeviceBuffer<float> probs(be, 2), ctx(be, 1);
  CachedAttention a;
  a.rows = 1, a.heads = 1, a.d_k = 1, a.d_v = 1;
  a.q = dq.data(), a.ld_q = 1;
  a.cache = dcache.data(), a.row_stride = 4, a.ld_cache = 2;
  a.rows_of = rows_of.data(), a.keys = 2;
  be.cached_attention(a, probs.data(), ctx.data());
  const auto p = testing::to_host(be, probs);
  EXPECT_NEAR(p[0], 0.75f, 1e-6f);
  EXPECT_NEAR(p[1], 0.25f, 1e-6f);
  EXPECT_NEAR(testing::to_host(be, ctx)[0], 7.0f, 1e-5f);
}

TEST_P(CachedAttentionTest, HistoriesSharedThroughTheTableOfCachedRows) {
  // Six rows at position 9 (10 keys) whose earlier positions sit in other cached rows, as beam
  // search leaves them after reordering: row r's position p in cached row (r·7 + p·3) mod 8.
  Case c{6, 3, 16, 8, 8, 10, 10, {}, {}, 9, 0};
  for (int r = 0; r < c.rows; ++r)
    for (int p = 0; p < c.keys; ++p) c.rows_of.push_back((r * 7 + p * 3) % c.cached_rows);
  check(*GetParam(), c, 11);
  // Restricted self-attention (section 4): only the last three positions and this one.
  c.window = 3;
  check(*GetParam(), c, 12);
  // Heads of 64 (the presets' d_k = d_v, which the kernel unrolls).
  c.d_k = c.d_v = 64, c.window = 0;
  check(*GetParam(), c, 13);
}

// Early in a sentence the window reaches before position 0: it is clipped there. At position 1
// with a window of 3 both keys are attended (a window taken from 1 - 3 = -2 would read before the
// cached row); at position 5 of 6 keys, positions 2 to 5.
TEST_P(CachedAttentionTest, WindowClippedAtTheFirstPosition) {
  Case c{3, 2, 8, 8, 3, 2, 0, {0, 1, 2}, {}, 1, 3};
  check(*GetParam(), c, 31);
  c.keys = 6, c.query_position = 5;
  check(*GetParam(), c, 32);
  // By hand, for one row and head: equal keys get equal weights over exactly the window.
  Backend& be = *GetParam();
  const std::vector<float> q{1}, cache{1, 5, 1, 7};  // positions 0, 1: key 1, values 5 and 7
  std::vector<std::int32_t> rows_of{0};
  auto dq = testing::to_device(be, q);
  auto dcache = testing::to_device(be, cache);
  auto drows_of = testing::to_device(be, rows_of);
  DeviceBuffer<float> probs(be, 2), ctx(be, 1);
  CachedAttention a;
  a.rows = 1, a.heads = 1, a.d_k = 1, a.d_v = 1;
  a.q = dq.data(), a.ld_q = 1;
  a.cache = dcache.data(), a.row_stride = 4, a.ld_cache = 2;
  a.rows_of = drows_of.data(), a.keys = 2;
  a.query_position = 1, a.window = 3;
  be.cached_attention(a, probs.data(), ctx.data());
  const auto p = testing::to_host(be, probs);
  EXPECT_FLOAT_EQ(p[0], 0.5f);
  EXPECT_FLOAT_EQ(p[1], 0.5f);
  EXPECT_FLOAT_EQ(testing::to_host(be, ctx)[0], 6.0f);
}

TEST_P(CachedAttentionTest, EncoderMemoryPerSentenceWithPaddedKeys) {
  // Cross attention: eight rows (two sentences of four hypotheses, the second sentence of the
  // batch finished: rows read cached sentences 2 and 0), sources of 5 and 12 of 12 keys.
  Case c{8, 4, 8, 8, 3, 12, 0, {2, 2, 2, 2, 0, 0, 0, 0}, {5, 1, 12}};
  check(*GetParam(), c, 21);
  c.d_k = c.d_v = 64;
  check(*GetParam(), c, 22);
}

INSTANTIATE_TEST_SUITE_P(Backends, CachedAttentionTest, ::testing::ValuesIn(testing::all_backends()),
                         testing::backend_name);

}  // namespace
}  // namespace attn
