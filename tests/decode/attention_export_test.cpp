// Attention export: what beam search reports for its output hypothesis equals what forced
// decoding of that output reports (two paths: cached one-position steps with reordered beams,
// and one full teacher-forced pass), and the weights keep the invariants of softmax attention.
// The forced pass itself is checked against the PyTorch reference (tests/reference).
#include "decode/attention_export.h"

#include <cmath>

#include <gtest/gtest.h>

#include "decode/beam_search.h"
#include "decode/forced_decoding.h"
#include "core/error.h"

namespace attn {
namespace {

Transformer& tiny_model() {
  static Transformer* m = [] {
    ModelConfig c = ModelConfig::preset("tiny");
    c.dropout = 0;
    auto* t = new Transformer(c);
    t->initialize(31);
    return t;
  }();
  return *m;
}

AttentionSelection everything() {
  AttentionSelection s;
  s.cross = s.decoder_self = s.encoder_self = true;
  return s;
}

const std::vector<std::vector<std::int32_t>> kSources{{5, 6, 7, 8, 9, 10, 11}, {12, 13}, {14, 15, 16, 17}};

// Passes everything to the recorder and notes each step's rows per sentence (the decoder's), to
// tell a sentence's first beam row from the others.
struct CountingTap : nn::AttentionTap {
  AttentionRecorder* recorder;
  const IncrementalDecoder* decoder;
  std::vector<int> rows_per_sentence;  // by step
  CountingTap(AttentionRecorder* r, const IncrementalDecoder* d) : recorder(r), decoder(d) {}
  void begin_batch() override { recorder->begin_batch(); }
  void begin_step(int position) override {
    rows_per_sentence.push_back(decoder->rows_per_sentence());
    recorder->begin_step(position);
  }
  void record(nn::AttentionSite site, int layer, const nn::AttentionShape& s, const float* probs) override {
    recorder->record(site, layer, s, probs);
  }
};

// Beam search with a recorder on the decoder, as the BatchTranslator runs it for one batch.
std::vector<std::vector<Hypothesis>> beam_with_attention(const SearchOptions& search, AttentionSelection selection,
                                                         std::vector<std::vector<inspect::AttentionMatrix>>* exported,
                                                         std::vector<int>* rows_per_sentence = nullptr) {
  Transformer& m = tiny_model();
  selection.check(m.config());
  IncrementalDecoder decoder(m);
  AttentionRecorder recorder(m.backend(), selection, m.config().heads);
  CountingTap tap(&recorder, &decoder);
  decoder.set_attention_tap(&tap);
  auto hyps = beam_search(decoder, kSources, search);
  exported->clear();
  for (std::size_t i = 0; i < kSources.size(); ++i)
    exported->push_back(
        recorder.hypothesis(static_cast<int>(i), static_cast<int>(kSources[i].size()) + 1, hyps[i].at(0).step_rows));
  if (rows_per_sentence) *rows_per_sentence = tap.rows_per_sentence;
  return hyps;
}

void expect_rows_are_distributions(const inspect::AttentionMatrix& m) {
  for (int r = 0; r < m.rows; ++r) {
    double sum = 0;
    for (int c = 0; c < m.cols; ++c) {
      ASSERT_GE(m.at(r, c), 0.0f);
      sum += m.at(r, c);
    }
    EXPECT_NEAR(sum, 1.0, 1e-5) << "row " << r << " of layer " << m.layer << " head " << m.head;
  }
}

TEST(AttentionExport, BeamSearchReportsTheWeightsOfItsOutputAsForcedDecodingDoes) {
  Transformer& m = tiny_model();
  SearchOptions search;
  search.beam_size = 4;
  search.max_length_b = 12;
  std::vector<std::vector<inspect::AttentionMatrix>> exported;
  std::vector<int> rows_per_sentence;
  const auto hyps = beam_with_attention(search, everything(), &exported, &rows_per_sentence);

  std::vector<std::vector<std::int32_t>> outputs;
  bool reordered = false;
  for (std::size_t i = 0; i < kSources.size(); ++i) {
    ASSERT_FALSE(hyps[i].empty());
    const Hypothesis& best = hyps[i][0];
    outputs.push_back(best.tokens);
    ASSERT_EQ(best.step_rows.size(), best.tokens.size() + 1);
    // The rows a hypothesis moved through: not always its sentence's first, or the test would
    // not see beams reordered.
    for (std::size_t t = 1; t < best.step_rows.size(); ++t) reordered |= best.step_rows[t] % rows_per_sentence[t] != 0;
  }
  EXPECT_TRUE(reordered) << "no output hypothesis ever left its sentence's first beam row";

  const AttentionSelection all = everything();
  const auto forced = force_decode(m, kSources, outputs, 2, &all);
  const int layers = m.config().decoder_layers, heads = m.config().heads;
  for (std::size_t i = 0; i < kSources.size(); ++i) {
    const auto& beam = exported[i];
    const auto& ref = forced[i].attention;
    ASSERT_EQ(beam.size(), ref.size());
    ASSERT_EQ(beam.size(), static_cast<std::size_t>(3 * layers * heads));
    EXPECT_NEAR(forced[i].log_prob, hyps[i][0].log_prob, 1e-4);
    for (std::size_t k = 0; k < beam.size(); ++k) {
      const auto& a = beam[k];
      const auto& b = ref[k];
      ASSERT_EQ(a.kind, b.kind);
      ASSERT_EQ(a.layer, b.layer);
      ASSERT_EQ(a.head, b.head);
      ASSERT_EQ(a.rows, b.rows);
      ASSERT_EQ(a.cols, b.cols);
      const int S = static_cast<int>(kSources[i].size()) + 1, T = static_cast<int>(outputs[i].size()) + 1;
      EXPECT_EQ(a.rows, a.kind == inspect::AttentionKind::encoder_self ? S : T);
      EXPECT_EQ(a.cols, a.kind == inspect::AttentionKind::decoder_self ? T : S);
      for (std::size_t e = 0; e < a.weights.size(); ++e)
        ASSERT_NEAR(a.weights[e], b.weights[e], 2e-5) << "sentence " << i << " matrix " << k << " element " << e;
      expect_rows_are_distributions(a);
      if (a.kind == inspect::AttentionKind::decoder_self) {  // causal: nothing after the query's own step
        for (int r = 0; r < a.rows; ++r)
          for (int c = r + 1; c < a.cols; ++c) ASSERT_EQ(a.at(r, c), 0.0f);
      }
    }
  }
}

// Records the raw cross-attention of every incremental step: the padded batch as the kernels see it.
struct RawCross : nn::AttentionTap {
  std::vector<std::pair<nn::AttentionShape, std::vector<float>>> steps;
  void record(nn::AttentionSite site, int, const nn::AttentionShape& s, const float* probs) override {
    if (site != nn::AttentionSite::cross) return;
    steps.emplace_back(s, std::vector<float>(static_cast<std::size_t>(s.probs_size())));
    tiny_model().backend().copy_to_host(steps.back().second.data(), probs, steps.back().second.size() * sizeof(float));
  }
};

TEST(AttentionExport, PaddingKeysGetExactlyZeroWeight) {
  Transformer& m = tiny_model();
  IncrementalDecoder decoder(m);
  RawCross raw;
  decoder.set_attention_tap(&raw);
  SearchOptions search;
  search.max_length_b = 5;
  beam_search(decoder, kSources, search);
  ASSERT_FALSE(raw.steps.empty());
  for (const auto& [s, probs] : raw.steps) {
    ASSERT_EQ(s.keys, 8);  // the longest source + EOS
    for (int b = 0; b < s.batch; ++b)
      for (int h = 0; h < s.heads; ++h)
        for (int q = 0; q < s.queries; ++q)
          for (int k = 0; k < s.keys; ++k) {
            const float w = probs[((static_cast<std::size_t>(b) * s.heads + h) * s.queries + q) * s.keys + k];
            ASSERT_TRUE(std::isfinite(w));
            // Sentences drop out of the batch as they finish, so a row's sentence is known only
            // while all three are decoded: there, keys past a sentence's length are padding.
            if (s.batch == 3 && k > static_cast<int>(kSources[b].size())) {
              ASSERT_EQ(w, 0.0f);
            }
          }
  }
}

TEST(AttentionExport, ExportingChangesNoTranslation) {
  Transformer& m = tiny_model();
  SearchOptions search;
  search.max_length_b = 12;
  IncrementalDecoder plain(m);
  const auto x = beam_search(plain, kSources, search);
  std::vector<std::vector<inspect::AttentionMatrix>> attention;
  const auto y = beam_with_attention(search, AttentionSelection{}, &attention);
  for (std::size_t i = 0; i < kSources.size(); ++i) {
    EXPECT_EQ(x[i][0].tokens, y[i][0].tokens);
    EXPECT_EQ(x[i][0].score, y[i][0].score);
    EXPECT_EQ(attention[i].size(), static_cast<std::size_t>(m.config().decoder_layers * m.config().heads));
  }
}

TEST(AttentionExport, SelectionChoosesKindsLayersAndHeads) {
  Transformer& m = tiny_model();
  AttentionSelection s;
  parse_attention_kinds("encoder_self,cross", s);
  s.layers = parse_index_list("--attention-layers", "1");
  s.heads = parse_index_list("--attention-heads", "1,0,1");  // sorted, repeats dropped
  const auto forced = force_decode(m, {kSources[1]}, {{20, 21, 22}}, 1, &s);
  ASSERT_EQ(forced[0].attention.size(), 4u);
  EXPECT_EQ(forced[0].attention[0].head, 0);
  ASSERT_EQ(forced[0].attention.size(), 4u);
  EXPECT_EQ(forced[0].attention[0].kind, inspect::AttentionKind::cross);
  EXPECT_EQ(forced[0].attention[2].kind, inspect::AttentionKind::encoder_self);
  for (const auto& a : forced[0].attention) EXPECT_EQ(a.layer, 1);
  EXPECT_EQ(forced[0].attention[1].head, 1);
}

TEST(AttentionExport, BadSelectionsAreClearErrors) {
  const ModelConfig& c = tiny_model().config();
  AttentionSelection s;
  s.layers = {c.decoder_layers};
  EXPECT_THROW(
      try { s.check(c); } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("no layer"), std::string::npos) << e.what();
        throw;
      },
      Error);
  s.layers = {};
  s.heads = {c.heads};
  EXPECT_THROW(s.check(c), Error);
  EXPECT_THROW(parse_attention_kinds("crosss", s), Error);
  EXPECT_THROW(parse_index_list("--attention-heads", "1,x"), Error);
  EXPECT_THROW(parse_index_list("--attention-heads", "-1"), Error);
  EXPECT_THROW(parse_index_list("--attention-heads", ""), Error);
  EXPECT_THROW(parse_index_list("--attention-heads", "1,"), Error);
  EXPECT_TRUE(parse_index_list("--attention-heads", "all").empty());
}

}  // namespace
}  // namespace attn
