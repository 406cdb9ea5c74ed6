#include "serve/libre_languages.h"

#include <algorithm>
#include <map>

#include "document/document_file.h"

namespace attn::serve {

using nlohmann::json;

std::string language_name(const std::string& code) {
  static const std::map<std::string, std::string> names{
      {"ar", "Arabic"},        {"de", "German"},  {"en", "English"},    {"es", "Spanish"},  {"fr", "French"},
      {"he", "Hebrew"},        {"hi", "Hindi"},   {"it", "Italian"},    {"ja", "Japanese"}, {"ko", "Korean"},
      {"nl", "Dutch"},         {"pl", "Polish"},  {"pt", "Portuguese"}, {"ru", "Russian"},  {"tr", "Turkish"},
      {"uk", "Ukrainian"},     {"zh", "Chinese"}, {"la", "Latin"},      {"el", "Greek"},    {"kjv", "English (KJV)"},
      {"web", "English (WEB)"}};
  const auto it = names.find(code);
  return it == names.end() ? code : it->second;
}

json languages_reply(const std::vector<ModelSpec>& specs) {
  std::map<std::string, std::vector<std::string>> targets;
  for (const ModelSpec& s : specs) targets[s.source].push_back(s.target);
  for (const ModelSpec& s : specs) targets.emplace(s.target, std::vector<std::string>{});
  json out = json::array();
  for (auto& [code, list] : targets) {
    std::sort(list.begin(), list.end());
    out.push_back({{"code", code}, {"name", language_name(code)}, {"targets", list}});
  }
  return out;
}

json frontend_settings_reply(const std::vector<ModelSpec>& specs, const Limits& limits, bool keys_required) {
  const ModelSpec& first = specs.front();
  return {{"charLimit", limits.max_chars},
          {"frontendTimeout", 500},
          {"apiKeys", keys_required},
          {"keyRequired", keys_required},
          {"suggestions", false},
          {"filesTranslation", true},
          {"supportedFilesFormat", document::file_extensions()},
          {"language",
           {{"source", {{"code", first.source}, {"name", language_name(first.source)}}},
            {"target", {{"code", first.target}, {"name", language_name(first.target)}}}}}};
}

}  // namespace attn::serve
