// attn's /v1 replies without HTTP: what the queue returned, assembled into /v1/translate's,
// /v1/score's and /v1/models' shapes as docs/serve.md describes them, against values written out
// by hand (texts round-trip through the test model's vocabulary: decode(encode(text)) == text).
#include "serve/v1_reply.h"

#include <gtest/gtest.h>

#include <cmath>

#include "serve/api_failure.h"

namespace attn::serve {
namespace {

using nlohmann::json;
using testing::failure_of;

const std::string kVocabulary = std::string(ATTN_SERVE_MODEL_DIR) + "/model/vocab.model";

Hypothesis hypothesis(std::vector<std::int32_t> tokens, double log_prob, double score) {
  Hypothesis h;
  h.tokens = std::move(tokens);
  h.log_prob = log_prob;
  h.score = score;
  return h;
}

TEST(V1TranslateReply, EachTextWithItsBestItsNBestAndItsTokens) {
  const data::Vocabulary vocabulary = data::Vocabulary::load(kVocabulary);
  TranslateRequest request;
  request.texts = {"", "gamma beta alpha"};
  EncodedTexts sources;
  sources.ids = {{}, vocabulary.encode(request.texts[1])};
  sources.tokens = {0, 9};  // the second was cropped from 9 tokens
  sources.cropped = {false, true};
  const std::vector<std::int32_t> best = vocabulary.encode("alpha beta gamma");
  std::vector<SentenceResult> results(2);
  results[1].n_best = {hypothesis(best, -1.5, -0.75), hypothesis({}, -3, -2)};
  const json expected{{"model", "xx-yy"},
                      {"translations",
                       {{{"text", ""},
                         {"score", 0},
                         {"log_prob", 0},
                         {"source_tokens", 0},
                         {"target_tokens", 0},
                         {"cropped", false},
                         {"n_best", json::array()}},
                        {{"text", "alpha beta gamma"},
                         {"score", -0.75},
                         {"log_prob", -1.5},
                         {"source_tokens", 10},  // with </s>
                         {"target_tokens", static_cast<int>(best.size()) + 1},
                         {"cropped", true},
                         {"n_best",
                          {{{"text", "alpha beta gamma"}, {"score", -0.75}, {"log_prob", -1.5}},
                           {{"text", ""}, {"score", -2}, {"log_prob", -3}}}}}}}};
  EXPECT_EQ(translate_reply(request, "xx-yy", vocabulary, sources, results), expected);
}

TEST(V1TranslateReply, AttentionOverTheLimitIsRefused) {
  const data::Vocabulary vocabulary = data::Vocabulary::load(kVocabulary);
  TranslateRequest request;
  request.texts = {"alpha", "beta"};
  request.want_attention = request.job.export_attention = true;
  std::vector<SentenceResult> results(2);
  results[0].attention.resize(1);
  results[0].attention[0].weights.resize(kMaxAttentionWeights / 2);
  results[1].attention.resize(1);
  results[1].attention[0].weights.resize(kMaxAttentionWeights / 2 + 1);
  EncodedTexts sources;
  EXPECT_EQ(
      failure_of([&] { translate_reply(request, "xx-yy", vocabulary, sources, results); }),
      "413 Request Entity Too Large: the attention asked for holds 8388609 weights, more than 8388608 a reply may "
      "carry; ask for fewer texts, kinds, layers or heads");
}

TEST(V1ScoreReply, PerplexityIsExpOfMinusLogProbPerTargetToken) {
  const data::Vocabulary vocabulary = data::Vocabulary::load(kVocabulary);
  ScoreRequest request;
  request.sources = {"alpha beta", ""};
  request.targets = {"beta alpha", ""};
  std::vector<ForcedDecoding> results(2);
  results[0].log_prob = -2;
  results[0].target_tokens = 2;
  results[1].log_prob = -3;
  results[1].target_tokens = 0;  // counted as 1
  const json reply = score_reply(request, "en-es", vocabulary, {}, {}, results);
  EXPECT_EQ(reply["model"], "en-es");
  ASSERT_EQ(reply["scores"].size(), 2u);
  EXPECT_EQ(reply["scores"][0]["log_prob"], -2.0);
  EXPECT_EQ(reply["scores"][0]["target_tokens"], 2);
  EXPECT_NEAR(reply["scores"][0]["perplexity"].get<double>(), 2.718281828459045, 1e-12);   // e
  EXPECT_NEAR(reply["scores"][1]["perplexity"].get<double>(), 20.085536923187668, 1e-12);  // e^3
  EXPECT_FALSE(reply["scores"][0].contains("attention"));
}

TEST(V1ModelsReply, IdsLanguagesFolderShortlistSizesAndDefaults) {
  std::vector<ModelSpec> specs{parse_model_spec("en-es=/models/a"), parse_model_spec("de-fr=/models/b")};
  specs[1].shortlist = "/models/b/lex.bin";
  specs[1].shortlist_k = 50;
  ModelConfig c;
  c.d_model = 32;
  c.d_ff = 64;
  c.heads = 2;
  c.d_k = 16;
  c.d_v = 8;
  c.encoder_layers = 1;
  c.decoder_layers = 3;
  c.vocab_size = 100;
  c.max_positions = 128;
  const json config = json::parse(R"({"d_model": 32, "d_ff": 64, "heads": 2, "d_k": 16, "d_v": 8,
      "encoder_layers": 1, "decoder_layers": 3, "vocab_size": 100, "max_positions": 128})");
  const json defaults = json::parse(
      R"({"beam": 4, "alpha": 0.6, "n_best": 1, "max_length_a": 1.0, "max_length_b": 50, "min_length": 0})");
  const json expected{{"models",
                       {{{"id", "en-es"},
                         {"source", "en"},
                         {"target", "es"},
                         {"path", "/models/a"},
                         {"shortlist", nullptr},
                         {"config", config},
                         {"defaults", defaults}},
                        {{"id", "de-fr"},
                         {"source", "de"},
                         {"target", "fr"},
                         {"path", "/models/b"},
                         {"shortlist", {{"path", "/models/b/lex.bin"}, {"k", 50}}},
                         {"config", config},
                         {"defaults", defaults}}}}};
  EXPECT_EQ(models_reply(specs, {c, c}), expected);
}

}  // namespace
}  // namespace attn::serve
