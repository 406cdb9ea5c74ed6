// Incremental decoding against full recomputation of the decoder over the whole prefix.
#include "decode/incremental_decoder.h"

#include <cmath>

#include <gtest/gtest.h>

#include "common/toy_batch.h"
#include "common/full_recomputation.h"

namespace attn {
namespace {

class IncrementalDecoderTest : public ::testing::TestWithParam<PositionEncoding> {};

TEST_P(IncrementalDecoderTest, MatchesFullRecomputationWithSeveralHypothesesPerSentence) {
  ModelConfig c = ModelConfig::preset("tiny");
  c.positions = GetParam();
  c.attention_window = GetParam() == PositionEncoding::Learned ? 2 : 0;
  Transformer m(c);
  m.initialize(9);
  const int V = c.vocab_size;
  const std::vector<std::vector<std::int32_t>> sources{{5, 6, 7, 8, 9}, {10, 11}};
  // Each sentence gets two hypotheses with different histories after the first step.
  const std::vector<std::vector<std::vector<std::int32_t>>> targets{{{20, 21, 22, 23}, {20, 30, 31, 32}},
                                                                    {{40, 41, 42, 43}, {40, 44, 45, 46}}};
  const int S = 6;
  std::vector<std::int32_t> src(2 * S, kPadId), lengths{6, 3};
  for (int b = 0; b < 2; ++b) {
    std::copy(sources[b].begin(), sources[b].end(), src.begin() + b * S);
    src[b * S + sources[b].size()] = kEosId;
  }
  IncrementalDecoder dec(m);
  dec.start(src.data(), lengths.data(), 2, S, 2, 10);
  std::vector<float> host(static_cast<std::size_t>(4) * V);
  for (int t = 0; t < 4; ++t) {
    std::vector<std::int32_t> tokens;
    for (int b = 0; b < 2; ++b)
      for (int h = 0; h < dec.rows_per_sentence(); ++h) tokens.push_back(t == 0 ? kBosId : targets[b][h][t - 1]);
    const float* lp = dec.step(tokens.data());
    m.backend().copy_to_host(host.data(), lp, static_cast<std::size_t>(dec.rows()) * V * sizeof(float));
    for (int b = 0; b < 2; ++b)
      for (int h = 0; h < dec.rows_per_sentence(); ++h) {
        const auto want = testing::recomputed_log_probs(m, sources[b], targets[b][h], t);
        for (int v = 0; v < V; ++v)
          ASSERT_NEAR(host[(b * dec.rows_per_sentence() + h) * V + v], want[v], 2e-5)
              << "step " << t << " sentence " << b << " hypothesis " << h;
      }
    if (t == 0) dec.select({0, 1}, {0, 0, 1, 1}, 2);  // both hypotheses share the first token
  }
  // Dropping sentence 0 and swapping sentence 1's hypotheses keeps the caches right.
  dec.select({1}, {3, 2}, 2);
  std::vector<std::int32_t> tokens{targets[1][1][3], targets[1][0][3]};
  const float* lp = dec.step(tokens.data());
  m.backend().copy_to_host(host.data(), lp, static_cast<std::size_t>(2) * V * sizeof(float));
  auto longer0 = targets[1][1];
  longer0.push_back(50);
  const auto want = testing::recomputed_log_probs(m, sources[1], longer0, 4);
  for (int v = 0; v < V; ++v) ASSERT_NEAR(host[v], want[v], 2e-5);
}

INSTANTIATE_TEST_SUITE_P(Positions, IncrementalDecoderTest,
                         ::testing::Values(PositionEncoding::Sinusoidal, PositionEncoding::Learned));

}  // namespace
}  // namespace attn
