#include "serve/libre_translate.h"

#include <algorithm>

#include "serve/api_error.h"
#include "serve/libre_languages.h"
#include "serve/request_fields.h"

namespace attn::serve {

using nlohmann::json;

namespace {

bool has_language(const std::vector<ModelSpec>& specs, const std::string& code) {
  return std::any_of(specs.begin(), specs.end(),
                     [&](const ModelSpec& s) { return s.source == code || s.target == code; });
}

// LibreTranslate's messages for codes that no model reads or writes.
void check_languages(const std::vector<ModelSpec>& specs, const std::string& source, const std::string& target) {
  if (source != "auto" && !has_language(specs, source)) throw ApiError(400, source + " is not supported");
  if (!has_language(specs, target)) throw ApiError(400, target + " is not supported");
}

}  // namespace

int libre_model(const std::vector<ModelSpec>& specs, const std::string& source, const std::string& target) {
  int model = -1;
  for (std::size_t i = 0; i < specs.size(); ++i)
    if (specs[i].source == source && specs[i].target == target) model = static_cast<int>(i);
  if (model < 0)
    throw ApiError(400, language_name(target) + " (" + target + ") is not available as a target language from " +
                            language_name(source) + " (" + source + ")");
  return model;
}

std::vector<std::string> sources_into(const std::vector<ModelSpec>& specs, const std::string& target) {
  std::vector<std::string> out;
  for (const ModelSpec& s : specs)
    if (s.target == target && std::find(out.begin(), out.end(), s.source) == out.end()) out.push_back(s.source);
  return out;
}

std::vector<std::string> served_sources(const std::vector<ModelSpec>& specs) {
  std::vector<std::string> out;
  for (const ModelSpec& s : specs)
    if (std::find(out.begin(), out.end(), s.source) == out.end()) out.push_back(s.source);
  return out;
}

LibreRequest read_libre_request(const json& request, const std::vector<ModelSpec>& specs, const Limits& limits) {
  if (!request.is_object()) throw ApiError(400, "Invalid JSON format");
  for (const char* key : {"q", "source", "target"})
    if (!request.contains(key) || empty_value(request[key]))
      invalid_request(std::string("missing ") + key + " parameter");
  LibreRequest r;
  r.texts = texts_of(request["q"]);
  r.several = request["q"].is_array();
  check_text_limits(r.texts, limits);
  const std::string* source = string_field(request, "source");
  const std::string* target = string_field(request, "target");
  check_languages(specs, *source, *target);
  const std::string* format = string_field(request, "format");
  if (format && !format->empty()) {
    if (*format != "text" && *format != "html") throw ApiError(400, *format + " format is not supported");
    r.format = *format;
  }
  r.target = *target;
  if (*source == "auto") {
    if (sources_into(specs, *target).empty())
      throw ApiError(400, language_name(*target) + " (" + *target + ") is not available as a target language");
    r.detect = true;
    r.model = -1;
  } else {
    r.model = libre_model(specs, *source, *target);
  }
  r.alternatives = integer_field(request, "alternatives", 0, 0, 16);
  return r;
}

TextLines split_lines(const std::vector<std::string>& texts) {
  TextLines out;
  for (const std::string& text : texts) {
    out.first_line.push_back(out.lines.size());
    std::size_t start = 0;
    for (;;) {
      const std::size_t end = text.find('\n', start);
      std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      out.lines.push_back(std::move(line));
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  out.first_line.push_back(out.lines.size());
  return out;
}

json libre_reply(const TextLines& lines, const std::vector<std::vector<std::string>>& n_best, int alternatives,
                 bool several) {
  json translated = json::array(), alternative = json::array();
  for (std::size_t t = 0; t + 1 < lines.first_line.size(); ++t) {
    std::string text;
    std::vector<std::string> alts(static_cast<std::size_t>(alternatives));
    for (std::size_t l = lines.first_line[t]; l < lines.first_line[t + 1]; ++l) {
      const std::vector<std::string>& line = n_best[l];
      if (l > lines.first_line[t]) {
        text += '\n';
        for (auto& a : alts) a += '\n';
      }
      if (!line.empty()) text += line[0];
      for (std::size_t a = 0; a < alts.size(); ++a)
        if (line.size() > a + 1) alts[a] += line[a + 1];
    }
    translated.push_back(text);
    // Alternatives that differ from the translation (a one-line text has exactly those of the beam).
    json list = json::array();
    for (const auto& a : alts)
      if (a != text && std::find(list.begin(), list.end(), a) == list.end()) list.push_back(a);
    alternative.push_back(list);
  }
  json out;
  out["translatedText"] = several ? translated : translated[0];
  if (alternatives > 0) out["alternatives"] = several ? alternative : alternative[0];
  return out;
}

}  // namespace attn::serve
