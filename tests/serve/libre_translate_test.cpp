// LibreTranslate's /translate, /languages and /frontend/settings without HTTP or models: requests
// checked with LibreTranslate's wording, texts cut into lines, and replies assembled from the lines'
// translations, against values written out by hand from LibreTranslate's documented API.
#include "serve/libre_translate.h"

#include <gtest/gtest.h>

#include "serve/api_failure.h"
#include "serve/libre_languages.h"

namespace attn::serve {
namespace {

using nlohmann::json;
using testing::failure_of;

std::vector<ModelSpec> specs() { return {parse_model_spec("en-es=/m1"), parse_model_spec("de-fr=/m2")}; }

std::string libre_failure(const json& request, const Limits& limits = {}) {
  return failure_of([&] { read_libre_request(request, specs(), limits); });
}

TEST(LibreRequest, ValidRequestsNameTheirModelTextsAndAlternatives) {
  LibreRequest r = read_libre_request({{"q", "Hello"}, {"source", "de"}, {"target", "fr"}}, specs(), {});
  EXPECT_EQ(r.model, 1);
  EXPECT_EQ(r.texts, std::vector<std::string>{"Hello"});
  EXPECT_FALSE(r.several);
  EXPECT_EQ(r.alternatives, 0);
  r = read_libre_request(
      {{"q", {"a", "b"}}, {"source", "en"}, {"target", "es"}, {"format", "text"}, {"alternatives", 3}}, specs(), {});
  EXPECT_EQ(r.model, 0);
  EXPECT_EQ(r.texts, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(r.several);
  EXPECT_EQ(r.alternatives, 3);
}

TEST(LibreRequest, RefusalsUseLibreTranslatesWording) {
  EXPECT_EQ(libre_failure(json::array()), "400 Invalid JSON format");
  EXPECT_EQ(libre_failure({{"source", "en"}, {"target", "es"}}), "400 Invalid request: missing q parameter");
  EXPECT_EQ(libre_failure({{"q", ""}, {"source", "en"}, {"target", "es"}}), "400 Invalid request: missing q parameter");
  EXPECT_EQ(libre_failure({{"q", "x"}, {"source", "en"}, {"target", nullptr}}),
            "400 Invalid request: missing target parameter");
  EXPECT_EQ(libre_failure({{"q", 5}, {"source", "en"}, {"target", "es"}}),
            "400 Invalid request: q must be a string or an array of strings");
  EXPECT_EQ(libre_failure({{"q", {"ok", 7}}, {"source", "en"}, {"target", "es"}}),
            "400 Invalid request: q[1] is not a string");
  // "auto" is taken (the service detects each text's language): only a target nothing reads into fails.
  EXPECT_EQ(libre_failure({{"q", "x"}, {"source", "auto"}, {"target", "es"}}), "(no error)");
  EXPECT_EQ(libre_failure({{"q", "x"}, {"source", "auto"}, {"target", "en"}}),
            "400 English (en) is not available as a target language");
  EXPECT_EQ(libre_failure({{"q", "x"}, {"source", "it"}, {"target", "es"}}), "400 it is not supported");
  EXPECT_EQ(libre_failure({{"q", "x"}, {"source", "en"}, {"target", "it"}}), "400 it is not supported");
  EXPECT_EQ(libre_failure({{"q", "x"}, {"source", "en"}, {"target", "es"}, {"format", "html"}}), "(no error)");
  EXPECT_EQ(libre_failure({{"q", "x"}, {"source", "en"}, {"target", "es"}, {"format", "pdf"}}),
            "400 pdf format is not supported");
  // Both codes are served, but not as this pair.
  EXPECT_EQ(libre_failure({{"q", "x"}, {"source", "es"}, {"target", "en"}}),
            "400 English (en) is not available as a target language from Spanish (es)");
  EXPECT_EQ(libre_failure({{"q", "x"}, {"source", "en"}, {"target", "fr"}}),
            "400 French (fr) is not available as a target language from English (en)");
  EXPECT_EQ(libre_failure({{"q", "x"}, {"source", "en"}, {"target", "es"}, {"alternatives", 17}}),
            "400 Invalid request: alternatives must be an integer from 0 to 16 (got 17)");
  EXPECT_EQ(libre_failure({{"q", "x"}, {"source", "en"}, {"target", "es"}, {"alternatives", 18446744073709551615ull}}),
            "400 Invalid request: alternatives must be an integer from 0 to 16 (got 18446744073709551615)");
  EXPECT_EQ(libre_failure({{"q", "x"}, {"source", 1}, {"target", "es"}}),
            "400 Invalid request: source must be a string (got 1)");
}

TEST(LibreRequest, LimitsCountTextsAndUnicodeCharacters) {
  Limits limits;
  limits.max_texts = 2;
  limits.max_chars = 4;
  const json two = {{"source", "en"}, {"target", "es"}};
  json r = two;
  r["q"] = {"a", "b", "c"};
  EXPECT_EQ(libre_failure(r, limits), "400 Invalid request: request (3) exceeds text limit (2)");
  r["q"] = "\xC3\xA9t\xC3\xA9s";  // "étés": 4 characters in 6 bytes
  EXPECT_EQ(libre_failure(r, limits), "(no error)");
  r["q"] = "\xC3\xA9t\xC3\xA9s!";
  EXPECT_EQ(libre_failure(r, limits), "400 Invalid request: request (5) exceeds text limit (4)");
  r["q"] = {"ok", "a\xFF"};
  EXPECT_EQ(libre_failure(r), "400 Invalid request: q[1] is not valid UTF-8 (byte 2)");
}

TEST(LibreLines, EachLineIsASentenceAndACarriageReturnBeforeANewlineGoes) {
  const TextLines l = split_lines({"one\r\ntwo", "", "three\n"});
  EXPECT_EQ(l.lines, (std::vector<std::string>{"one", "two", "", "three", ""}));
  EXPECT_EQ(l.first_line, (std::vector<std::size_t>{0, 2, 3, 5}));
}

TEST(LibreReply, LinesAreJoinedAndAlternativesDifferFromTheTranslation) {
  const TextLines l = split_lines({"a\nb", "c"});
  // Line translations, best first: "a" has two alternatives, "b" one, "c" two that repeat.
  const std::vector<std::vector<std::string>> n_best{{"A", "A2", "A3"}, {"B", "B2"}, {"C", "C", "C3"}};
  EXPECT_EQ(libre_reply(l, n_best, 2, true),
            json::parse(R"({"translatedText": ["A\nB", "C"], "alternatives": [["A2\nB2", "A3\n"], ["C3"]]})"));
  EXPECT_EQ(libre_reply(l, n_best, 0, true), json::parse(R"({"translatedText": ["A\nB", "C"]})"));
}

TEST(LibreReply, OneTextGetsStringsAndAnEmptyLineStaysEmpty) {
  const TextLines l = split_lines({"x\n\ny"});
  const std::vector<std::vector<std::string>> n_best{{"X", "X2"}, {}, {"Y", "Y"}};
  EXPECT_EQ(libre_reply(l, n_best, 1, false),
            json::parse(R"({"translatedText": "X\n\nY", "alternatives": ["X2\n\nY"]})"));
  // Alternatives that all equal the translation leave none.
  EXPECT_EQ(libre_reply(split_lines({"y"}), {{"Y", "Y"}}, 1, false),
            json::parse(R"({"translatedText": "Y", "alternatives": []})"));
}

TEST(LibreLanguages, EveryCodeWithItsNameAndTargets) {
  std::vector<ModelSpec> s = specs();
  s.push_back(parse_model_spec("en-de=/m3"));
  s.push_back(parse_model_spec("xx-yy=/m4"));
  EXPECT_EQ(languages_reply(s), json::parse(R"([
      {"code": "de", "name": "German", "targets": ["fr"]},
      {"code": "en", "name": "English", "targets": ["de", "es"]},
      {"code": "es", "name": "Spanish", "targets": []},
      {"code": "fr", "name": "French", "targets": []},
      {"code": "xx", "name": "xx", "targets": ["yy"]},
      {"code": "yy", "name": "yy", "targets": []}])"));
  EXPECT_EQ(language_name("kjv"), "English (KJV)");
}

TEST(LibreLanguages, FrontendSettingsCarryTheLimitAndTheFirstPair) {
  Limits limits;
  limits.max_chars = 1234;
  EXPECT_EQ(frontend_settings_reply(specs(), limits, true), json::parse(R"({
      "charLimit": 1234, "frontendTimeout": 500, "apiKeys": true, "keyRequired": true,
      "suggestions": false, "filesTranslation": true,
      "supportedFilesFormat": [".txt", ".html", ".htm", ".md", ".docx", ".odt"],
      "language": {"source": {"code": "en", "name": "English"}, "target": {"code": "es", "name": "Spanish"}}})"));
  EXPECT_FALSE(frontend_settings_reply(specs(), limits, false)["keyRequired"].get<bool>());
}

}  // namespace
}  // namespace attn::serve
