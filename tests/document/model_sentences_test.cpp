// ModelSentences: a loaded model as the translator of documents. Its word alignments are checked
// against an independent reading of the same attention: the model forced through each translation
// in one parallel pass (decode/forced_decoding), not the step-by-step search that produced it.
#include "document/model_sentences.h"

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "decode/attention_export.h"
#include "decode/attention_records.h"
#include "decode/forced_decoding.h"
#include "decode/random_tiny_model.h"
#include "inspect/word_alignment.h"

namespace attn::document {
namespace {

TEST(ModelSentences, AlignsEachMarkedTranslationAsTheModelReadingItAgainDoes) {
  const LoadedModel loaded = testing::random_tiny_model(testing::fresh_temp_dir("model_sentences"), 64, 7);
  BatchTranslatorOptions options;    // beam 4, α 0.6: attn translate's defaults
  options.search.max_length_b = 12;  // a random model's translations end at the limit: keep them short
  ModelSentences sentences(loaded, options);
  const std::vector<std::string> text = {
      "In the beginning God created the heaven and the earth.", "And the earth was without form, and void.",
      "And God said, Let there be light: and there was light.", "And God saw the light, that it was good."};
  const std::vector<bool> marked = {true, false, true, true};
  const std::vector<SentenceTranslation> got = sentences(text, marked);
  ASSERT_EQ(got.size(), text.size());

  // Asking for alignments does not change the translations: the same text without any.
  const std::vector<SentenceTranslation> plain = sentences(text, std::vector<bool>(text.size(), false));
  for (std::size_t i = 0; i < text.size(); ++i) {
    EXPECT_EQ(got[i].text, plain[i].text) << i;
    EXPECT_TRUE(plain[i].links.empty()) << i;
  }
  EXPECT_TRUE(got[1].links.empty()) << "a sentence without markup needs no alignment";

  // The independent reading: each marked translation forced through the model, the alignment
  // layer's cross-attention (mean of heads) turned into links by the same rule.
  const ModelConfig& config = loaded.model->config();
  AttentionSelection cross;
  cross.layers = {inspect::default_alignment_layer(config.decoder_layers)};
  const inspect::AlignmentOptions align = resolve_alignment(config, cross, -1, "mean", 0);
  BatchTranslator translator(*loaded.model, *loaded.vocabulary, options);  // for the output's tokens
  const std::vector<BatchTranslation> tokens = translator.translate(text);
  int linked = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!marked[i]) continue;
    ASSERT_EQ(tokens[i].text, got[i].text) << i;
    const std::vector<std::int32_t> source = tokens[i].source_ids;
    const std::vector<std::int32_t> target = tokens[i].n_best.at(0).tokens;
    std::vector<ForcedDecoding> forced = force_decode(*loaded.model, {source}, {target}, 1, &cross, /*scores=*/false);
    const inspect::AttentionRecord record =
        forced_decoding_record(*loaded.vocabulary, 1, text[i], got[i].text, source, target, std::move(forced.at(0)));
    std::vector<std::pair<int, int>> expected;
    for (const inspect::Link& link : inspect::align_record(record, align))
      expected.emplace_back(link.source, link.target);
    EXPECT_EQ(got[i].links, expected) << i << ": " << got[i].text;
    linked += static_cast<int>(expected.size());
  }
  EXPECT_GT(linked, 0) << "no link to compare: the test would pass with alignment broken";
}

}  // namespace
}  // namespace attn::document
