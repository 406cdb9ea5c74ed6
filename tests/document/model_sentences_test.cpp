// ModelSentences: a loaded model as the translator of documents. Its word alignments are checked
// against an independent reading of the same attention: the model forced through each translation
// in one parallel pass (decode/forced_decoding), not the step-by-step search that produced it.
#include "document/model_sentences.h"

#include <memory>

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "decode/attention_export.h"
#include "decode/attention_records.h"
#include "decode/forced_decoding.h"
#include "decode/random_tiny_model.h"
#include "document/document_translation.h"
#include "document/text_document.h"
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

// The longest sentence handed to the model whole: what was asked, else the length the model was
// trained on (config sentence_tokens), else what it reads at all (hand-worked cases).
TEST(DocumentSentenceTokens, AskedElseTrainedElseTheModelsLimit) {
  ModelConfig c = ModelConfig::preset("tiny");
  c.max_positions = 1024;
  c.sentence_tokens = 42;
  EXPECT_EQ(document_sentence_tokens(c, 0), 42);
  EXPECT_EQ(document_sentence_tokens(c, 10), 10);
  EXPECT_EQ(document_sentence_tokens(c, 5000), 1023);
  c.sentence_tokens = 0;
  EXPECT_EQ(document_sentence_tokens(c, 0), 1023);
}

// Through the faces' common path (document_options, as attn translate --format, the C++ and Python
// APIs use it): a sentence longer than the model's training sentences is cut into pieces of at
// most that many tokens, and the warning names the limit.
TEST(ModelSentences, CutsADocumentsSentencesLongerThanTheModelsTrainingSentences) {
  LoadedModel loaded = testing::random_tiny_model(testing::fresh_temp_dir("model_sentences_cut"), 64, 7);
  ModelConfig config = loaded.model->config();
  config.sentence_tokens = 6;
  loaded.model = std::make_unique<Transformer>(config);
  loaded.model->initialize(7);
  BatchTranslatorOptions options;
  options.search.max_length_b = 4;
  ModelSentences sentences(loaded, options);
  const DocumentOptions o = document_options(sentences, loaded, "en");
  EXPECT_EQ(o.max_sentence_tokens, 6);
  const std::string text = "And God said, Let there be light: and there was light, and it was good.";
  ASSERT_GT(sentences.count_tokens(text), 12);
  const SentenceTranslator translate = [&](const std::vector<std::string>& units, const std::vector<bool>& align) {
    return sentences(units, align);
  };
  const DocumentTranslation t = translate_document(read_text(text), translate, o);
  ASSERT_GE(t.sentences.size(), 2u);
  for (const TranslatedSentence& s : t.sentences) {
    EXPECT_TRUE(s.cut) << s.source;
    EXPECT_LE(sentences.count_tokens(s.source), 6) << s.source;
  }
  ASSERT_FALSE(t.warnings.empty());
  EXPECT_NE(t.warnings.back().find("longer than 6 tokens"), std::string::npos) << t.warnings.back();

  options.max_input_tokens = 9;  // asked for: it wins
  const ModelSentences asked(loaded, options);
  EXPECT_EQ(document_options(asked, loaded, "en").max_sentence_tokens, 9);
}

}  // namespace
}  // namespace attn::document
