#pragma once
// LibreTranslate's POST /translate without HTTP or models: the request checked with LibreTranslate's
// wording, texts cut into the lines the model translates, and the reply assembled from the lines'
// translations.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve/serve_options.h"

namespace attn::serve {

struct LibreRequest {
  std::vector<std::string> texts;
  bool several = false;  // q was an array: the reply holds arrays too
  int model = 0;         // index into the specs served; -1 with source "auto"
  bool detect = false;   // source "auto": each text's language is detected among the served sources
  std::string target;
  std::string format = "text";  // "text" (paragraphs and sentences) or "html"
  int alternatives = 0;         // translations besides the best, per text
};

// Checks a /translate body (JSON, or a form read as JSON) against the models served and the
// limits; throws ApiError 400 with LibreTranslate's messages.
LibreRequest read_libre_request(const nlohmann::json& request, const std::vector<ModelSpec>& specs,
                                const Limits& limits);

// The model from `source` to `target`, or LibreTranslate's message for a pair that none translates.
int libre_model(const std::vector<ModelSpec>& specs, const std::string& source, const std::string& target);

// The sources served into `target`: the languages "auto" chooses among.
std::vector<std::string> sources_into(const std::vector<ModelSpec>& specs, const std::string& target);

// Every source language served (those /detect answers with).
std::vector<std::string> served_sources(const std::vector<ModelSpec>& specs);

// With alternatives, each line of a text is a sentence (LibreTranslate's clients send paragraphs); the lines'
// translations are joined again with newlines. A "\r" before a "\n" is dropped.
struct TextLines {
  std::vector<std::string> lines;
  std::vector<std::size_t> first_line;  // text t's lines are [first_line[t], first_line[t + 1])
};
TextLines split_lines(const std::vector<std::string>& texts);

// The reply: "translatedText", and with alternatives > 0 "alternatives" (those that differ from the
// translation, without repeats); strings for one text, arrays for several. n_best[l] holds line l's
// translations, best first (fewer than asked, or none, count as empty lines).
nlohmann::json libre_reply(const TextLines& lines, const std::vector<std::vector<std::string>>& n_best,
                           int alternatives, bool several);

}  // namespace attn::serve
