// attn's /v1/translate and /v1/score requests without HTTP or models: which model a request
// names, the search options with their defaults and ranges, attention and alignment checked
// against a model's sizes, and score pairs, against values written out by hand from
// docs/serve.md and attn translate's defaults.
#include "serve/v1_request.h"

#include <gtest/gtest.h>

#include "serve/api_failure.h"

namespace attn::serve {
namespace {

using nlohmann::json;
using testing::failure_of;

std::vector<ModelSpec> specs() { return {parse_model_spec("en-es=/m1"), parse_model_spec("de-fr=/m2")}; }

// Two models of 3 decoder layers, 2 encoder layers and 4 heads.
std::vector<ModelConfig> configs() {
  ModelConfig c;
  c.encoder_layers = 2;
  c.decoder_layers = 3;
  c.heads = 4;
  return {c, c};
}

std::string translate_failure(const json& request, const Limits& limits = {}) {
  return failure_of([&] { read_translate_request(request, specs(), configs(), limits); });
}

std::string score_failure(const json& request, const Limits& limits = {}) {
  return failure_of([&] { read_score_request(request, specs(), configs(), limits); });
}

TEST(V1Model, NamedByIdOrLanguagesAndTheOnlyOneByDefault) {
  EXPECT_EQ(model_for({{"model", "de-fr"}}, specs()), 1);
  EXPECT_EQ(model_for({{"source", "en"}, {"target", "es"}}, specs()), 0);
  EXPECT_EQ(model_for(json::object(), {parse_model_spec("xx-yy=/m")}), 0);
  EXPECT_EQ(failure_of([] { model_for(json::object(), specs()); }),
            "400 Invalid request: give model (one of en-es, de-fr), or source and target");
  EXPECT_EQ(failure_of([] {
              model_for({{"source", "en"}}, specs());
            }),
            "400 Invalid request: give model (one of en-es, de-fr), or source and target");
  EXPECT_EQ(failure_of([] {
              model_for({{"model", "en-fr"}}, specs());
            }),
            "404 No model en-fr (this server has en-es, de-fr)");
  EXPECT_EQ(failure_of([] {
              model_for({{"source", "es"}, {"target", "en"}}, specs());
            }),
            "404 No model es-en (this server has en-es, de-fr)");
  EXPECT_EQ(failure_of([] {
              model_for({{"model", 3}}, specs());
            }),
            "400 Invalid request: model must be a string (got 3)");
}

TEST(V1Translate, DefaultsAreAttnTranslatesAndFieldsAreRead) {
  TranslateRequest r = read_translate_request({{"model", "de-fr"}, {"q", "Hallo"}}, specs(), configs(), {});
  EXPECT_EQ(r.model, 1);
  EXPECT_EQ(r.texts, std::vector<std::string>{"Hallo"});
  EXPECT_EQ(r.job.search.beam_size, 4);
  EXPECT_FLOAT_EQ(r.job.search.length_penalty, 0.6f);
  EXPECT_EQ(r.job.search.n_best, 1);
  EXPECT_FLOAT_EQ(r.job.search.max_length_a, 1.0f);
  EXPECT_EQ(r.job.search.max_length_b, 50);
  EXPECT_EQ(r.job.search.min_length, 0);
  EXPECT_FALSE(r.job.export_attention);
  EXPECT_FALSE(r.want_attention);
  EXPECT_FALSE(r.want_alignment);

  r = read_translate_request({{"model", "en-es"},
                              {"q", {"a", "b"}},
                              {"beam", 2},
                              {"n_best", 2},
                              {"alpha", 1},
                              {"max_length_a", 0.5},
                              {"max_length_b", 7},
                              {"min_length", 3}},
                             specs(), configs(), {});
  EXPECT_EQ(r.texts, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r.job.search.beam_size, 2);
  EXPECT_EQ(r.job.search.n_best, 2);
  EXPECT_FLOAT_EQ(r.job.search.length_penalty, 1.0f);
  EXPECT_FLOAT_EQ(r.job.search.max_length_a, 0.5f);
  EXPECT_EQ(r.job.search.max_length_b, 7);
  EXPECT_EQ(r.job.search.min_length, 3);
}

TEST(V1Translate, WrongFieldsAreNamed) {
  const json base = {{"model", "en-es"}, {"q", "x"}};
  const auto with = [&](const char* key, const json& value) {
    json r = base;
    r[key] = value;
    return r;
  };
  EXPECT_EQ(translate_failure("text"), "400 Invalid request: the body must be a JSON object");
  EXPECT_EQ(translate_failure(with("beams", 2)), "400 Invalid request: unknown key \"beams\"");
  EXPECT_EQ(translate_failure({{"model", "en-es"}}), "400 Invalid request: missing q parameter");
  EXPECT_EQ(
      translate_failure(with("q", "one\ntwo")),
      "400 Invalid request: text 1 has several lines: send each line as a text of its own, or give a format (text, "
      "html, markdown)");
  // Types here; the values' limits are every face's (tests/serve/search_option_faces_test.cpp).
  EXPECT_EQ(translate_failure(with("beam", 129)),
            "400 Invalid request: beam must be an integer from 1 to 128 (got 129)");
  EXPECT_EQ(translate_failure(with("beam", 2.5)), "400 Invalid request: beam must be an integer (got 2.5)");
  EXPECT_EQ(translate_failure(with("beam", 1e10)), "400 Invalid request: beam must be an integer (got 10000000000.0)");
  // Integers past 2^63 (JSON's unsigned 64-bit ones) are refused as they were sent, not read as negatives
  // (2^64 - 1 would read as -1, 2^63 + 4 as -2^63 + 4).
  EXPECT_EQ(translate_failure(with("beam", 18446744073709551615ull)),
            "400 Invalid request: beam must be an integer (got 18446744073709551615)");
  EXPECT_EQ(translate_failure(with("min_length", 9223372036854775812ull)),
            "400 Invalid request: min_length must be an integer (got 9223372036854775812)");
  EXPECT_EQ(translate_failure(with("alpha", "big")), "400 Invalid request: alpha must be a number (got \"big\")");
  EXPECT_EQ(translate_failure(with("alpha", 1e300)), "400 Invalid request: alpha must be a number (got 1e+300)");
  EXPECT_EQ(translate_failure(with("alpha", 101)),
            "400 Invalid request: alpha must be a finite number from 0 to 10 (got 101)");
  EXPECT_EQ(translate_failure(with("n_best", 5)),
            "400 Invalid request: n_best must be an integer from 1 to the beam, 4 (got 5)");
  // A quoted value is cut to 60 characters.
  EXPECT_EQ(translate_failure(with("min_length", std::string(70, 'z'))),
            "400 Invalid request: min_length must be an integer (got \"" + std::string(56, 'z') + "...)");
  Limits limits;
  limits.max_texts = 1;
  EXPECT_EQ(translate_failure(with("q", {"a", "b"}), limits),
            "400 Invalid request: request (2) exceeds text limit (1)");
}

TEST(V1Translate, AttentionAndAlignmentAreCheckedAgainstTheModel) {
  const json base = {{"model", "en-es"}, {"q", "x"}};
  const auto with = [&](const char* key, const json& value) {
    json r = base;
    r[key] = value;
    return r;
  };
  TranslateRequest r = read_translate_request(
      with("attention", {{"kinds", "cross,encoder_self"}, {"layers", {1, 0, 1}}}), specs(), configs(), {});
  EXPECT_TRUE(r.want_attention);
  EXPECT_TRUE(r.job.export_attention);
  EXPECT_TRUE(r.job.attention.cross);
  EXPECT_TRUE(r.job.attention.encoder_self);
  EXPECT_FALSE(r.job.attention.decoder_self);
  EXPECT_EQ(r.job.attention.layers, (std::vector<int>{0, 1}));  // sorted, without repeats

  // Alignment alone exports the cross-attention it reads: every layer and head.
  r = read_translate_request(with("alignment", {{"layer", 1}, {"head", 2}, {"threshold", 0.25}}), specs(), configs(),
                             {});
  EXPECT_FALSE(r.want_attention);
  EXPECT_TRUE(r.want_alignment);
  EXPECT_TRUE(r.job.export_attention);
  EXPECT_TRUE(r.job.attention.layers.empty());
  EXPECT_EQ(r.alignment.layer, 1);
  EXPECT_EQ(r.alignment.head, 2);
  EXPECT_DOUBLE_EQ(r.alignment.threshold, 0.25);
  r = read_translate_request(with("alignment", true), specs(), configs(), {});
  EXPECT_EQ(r.alignment.head, inspect::kMeanOfHeads);
  EXPECT_DOUBLE_EQ(r.alignment.threshold, 0);

  EXPECT_EQ(translate_failure(with("attention", "yes")),
            "400 Invalid request: attention must be true, false or an object {kinds, layers, heads}");
  EXPECT_EQ(translate_failure(with("attention", {{"layer", 1}})),
            "400 Invalid request: attention has no key \"layer\" (it takes kinds, layers, heads)");
  EXPECT_EQ(translate_failure(with("attention", json::parse(R"({"heads": [[]]})"))),
            "400 Invalid request: attention.heads holds []: give names or numbers");
  EXPECT_EQ(translate_failure(with("attention", json::parse(R"({"heads": [4]})"))),
            "400 Invalid request: attention: --attention-heads: the model has no head 4 (it has 4: 0-3)");
  EXPECT_EQ(translate_failure(with("attention", json::parse(R"({"kinds": "cross,encoder_self", "layers": [2]})"))),
            "400 Invalid request: attention: --attention-layers: the model has no layer 2 for the chosen kinds "
            "(both stacks have 2: 0-1)");
  // A number past 2^63 is named as it was sent (read as a signed integer it was -1).
  EXPECT_EQ(translate_failure(with("attention", json::parse(R"({"heads": [18446744073709551615]})"))),
            "400 Invalid request: attention: attention.heads: '18446744073709551615' is not a number from 0 (give a "
            "comma-separated list, or all)");
  EXPECT_EQ(translate_failure(with("alignment", json::parse(R"({"head": 18446744073709551615})"))),
            "400 Invalid request: alignment: --alignment-head: '18446744073709551615' is not a number from 0 (give a "
            "comma-separated list, or all)");
  EXPECT_EQ(translate_failure(with("alignment", 1)),
            "400 Invalid request: alignment must be true, false or an object {layer, head, threshold}");
  EXPECT_EQ(translate_failure(with("alignment", {{"heads", 1}})),
            "400 Invalid request: alignment has no key \"heads\" (it takes layer, head, threshold)");
  EXPECT_EQ(translate_failure(with("alignment", {{"head", 1.5}})),
            "400 Invalid request: alignment.head must be a head number or \"mean\"");
  EXPECT_EQ(translate_failure(with("alignment", {{"layer", 3}})),
            "400 Invalid request: alignment: --alignment-layer: the model has no decoder layer 3 (it has 3)");
  // The alignment reads attention that the request's own selection leaves out.
  json both = with("alignment", {{"layer", 0}});
  both["attention"] = json::parse(R"({"layers": [2]})");
  EXPECT_EQ(translate_failure(both),
            "400 Invalid request: alignment: --alignment reads cross-attention layer 0, every head: --attention-kinds, "
            "--attention-layers and --attention-heads must include it");
}

TEST(V1Score, PairsAndTheirLimits) {
  ScoreRequest r = read_score_request(
      json::parse(R"({"model": "de-fr", "pairs": [{"source": "a b", "target": "b a"}]})"), specs(), configs(), {});
  EXPECT_EQ(r.model, 1);
  EXPECT_EQ(r.sources, std::vector<std::string>{"a b"});
  EXPECT_EQ(r.targets, std::vector<std::string>{"b a"});
  EXPECT_FALSE(r.want_attention);
  r = read_score_request(
      json::parse(R"({"model": "en-es", "pairs": [{"source": "x", "target": "y"}], "attention": true})"), specs(),
      configs(), {});
  EXPECT_TRUE(r.want_attention);
  EXPECT_TRUE(r.attention.cross);

  const json pair = {{"source", "ab"}, {"target", "cd"}};
  EXPECT_EQ(score_failure({{"model", "en-es"}, {"pairs", json::array({pair})}, {"source", "en"}}),
            "400 Invalid request: unknown key \"source\" (score takes model, pairs, attention)");
  EXPECT_EQ(score_failure({{"pairs", json::array({pair})}}),
            "400 Invalid request: give model (one of en-es, de-fr), or source and target");
  EXPECT_EQ(score_failure({{"model", "en-es"}, {"pairs", json::array()}}),
            "400 Invalid request: pairs must be a non-empty array of {\"source\": ..., \"target\": ...}");
  EXPECT_EQ(score_failure({{"model", "en-es"}, {"pairs", json::array({pair, json::parse(R"({"source": "x"})")})}}),
            "400 Invalid request: pairs[1] must be {\"source\": string, \"target\": string}");
  EXPECT_EQ(score_failure({{"model", "en-es"}, {"pairs", json::array({json{{"source", "x"}, {"target", "ok\xC3"}}})}}),
            "400 Invalid request: pairs[0].target is not valid UTF-8 (byte 3)");
  Limits limits;
  limits.max_texts = 1;
  limits.max_chars = 5;
  EXPECT_EQ(score_failure({{"model", "en-es"}, {"pairs", json::array({pair, pair})}}, limits),
            "400 Invalid request: request (2) exceeds text limit (1)");
  // Characters count sources and targets together.
  EXPECT_EQ(
      score_failure({{"model", "en-es"}, {"pairs", json::parse(R"([{"source": "abc", "target": "def"}])")}}, limits),
      "400 Invalid request: request (6) exceeds text limit (5)");
}

}  // namespace
}  // namespace attn::serve
