#pragma once
// A tiny translation task whose translations are genuinely ambiguous, and a tiny model trained on
// it in a few seconds: for tests that need a model that has learned something (beam search
// against a reference, int8 against float32).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/toy_batch.h"
#include "core/random.h"
#include "model/transformer.h"

namespace attn::testing::tiny_task {

// The task: a source sentence of 1-8 words from ids 4..11 translates word by word, in order; word
// i is rendered by the one token 12 + i, or with probability 0.05 + 0.05·i by the two tokens
// 20 + i, 28. Every word's single rendering is the likelier, so the task's most probable
// translation is all single renderings; the two-token ones make hypotheses of different lengths,
// and their probabilities differ per word, so that no two alternatives are equally likely by
// construction (the comparison needs no near-ties, see kTolerance).
constexpr int kWords = 8;
constexpr std::int32_t kFirstWord = 4, kSingle = 12, kDouble = 20, kMark = 28, kVocab = 29;

inline double double_rendering_probability(int word) { return 0.03 + 0.04 * word; }

inline std::vector<std::int32_t> sample_translation(const std::vector<std::int32_t>& source, Random& rng) {
  std::vector<std::int32_t> out;
  for (std::int32_t w : source) {
    const int i = w - kFirstWord;
    if (rng.uniform() < double_rendering_probability(i)) {
      out.push_back(kDouble + i);
      out.push_back(kMark);
    } else {
      out.push_back(kSingle + i);
    }
  }
  return out;
}

inline std::vector<std::int32_t> single_rendering(const std::vector<std::int32_t>& source) {
  std::vector<std::int32_t> out;
  for (std::int32_t w : source) out.push_back(kSingle + (w - kFirstWord));
  return out;
}

// Trains the tiny preset (label smoothing off, so that it learns the task's probabilities) with
// Adam on fresh samples, 64 sentences an update, 300 updates. Plain host code: the trainer is a
// floor above decoding. The order of float sums, and so the weights, depends on the thread count:
// pinned, to one thread: at this size a second thread adds OpenMP's waits rather than speed,
// which on a shared machine dominate.
inline Transformer trained_model() {
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  ModelConfig c = ModelConfig::preset("tiny");
  c.vocab_size = kVocab;
  c.dropout = 0;
  c.label_smoothing = 0;
  Transformer m(c);
  m.initialize(7);
  Random rng(2024);
  std::vector<float> p = m.parameters_to_host(), m1(p.size(), 0.0f), m2(p.size(), 0.0f);
  constexpr int kSteps = 300, kSentences = 64;
  constexpr double kBeta1 = 0.9, kBeta2 = 0.98, kEps = 1e-9;
  for (int step = 1; step <= kSteps; ++step) {
    std::vector<std::vector<std::int32_t>> sources, targets;
    int tokens = 0;
    for (int s = 0; s < kSentences; ++s) {
      std::vector<std::int32_t> source(1 + rng.below(kWords));
      for (auto& w : source) w = kFirstWord + static_cast<std::int32_t>(rng.below(kWords));
      targets.push_back(sample_translation(source, rng));
      tokens += static_cast<int>(targets.back().size()) + 1;
      sources.push_back(std::move(source));
    }
    const ToyBatch batch(sources, targets);
    m.zero_gradients();
    m.forward_backward(batch.view(), nn::Dropout{}, 1.0f / static_cast<float>(tokens));
    const std::vector<float> g = m.gradients_to_host();
    const double lr =
        6e-3 * std::min({1.0, step / 50.0, 2.0 * (kSteps - step + 1) / kSteps});  // warm-up; to 0 over the second half
    const double c1 = 1 - std::pow(kBeta1, step), c2 = 1 - std::pow(kBeta2, step);
    for (std::size_t j = 0; j < p.size(); ++j) {
      m1[j] = static_cast<float>(kBeta1 * m1[j] + (1 - kBeta1) * g[j]);
      m2[j] = static_cast<float>(kBeta2 * m2[j] + (1 - kBeta2) * g[j] * g[j]);
      p[j] -= static_cast<float>(lr * (m1[j] / c1) / (std::sqrt(m2[j] / c2) + kEps));
    }
    m.set_parameters(p);
  }
  omp_set_num_threads(threads);  // the searches run with the process's threads
  return m;
}

}  // namespace attn::testing::tiny_task
