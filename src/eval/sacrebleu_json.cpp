#include "eval/sacrebleu_json.h"

#include "core/error.h"
#include "core/json_file.h"
#include "eval/sacrebleu_format.h"

namespace attn::eval {
namespace {

nlohmann::ordered_json score_object(const std::string& name, double score, int width, const std::string& signature) {
  nlohmann::ordered_json json;
  json["name"] = name;
  json["score"] = std::stod(format_fixed(score, width));
  json["signature"] = signature;
  return json;
}

// "nrefs:1|case:mixed|..." -> "nrefs": "1", "case": "mixed", ...
void add_signature_fields(nlohmann::ordered_json& json, const std::string& signature) {
  std::size_t start = 0;
  while (start <= signature.size()) {
    std::size_t end = signature.find('|', start);
    if (end == std::string::npos) end = signature.size();
    const std::string field = signature.substr(start, end - start);
    const std::size_t colon = field.find(':');
    json[field.substr(0, colon)] = colon == std::string::npos ? "" : field.substr(colon + 1);
    start = end + 1;
  }
}

}  // namespace

nlohmann::ordered_json bleu_json(const BleuScore& score, const BleuOptions& options, int width) {
  const std::string signature = bleu_signature(options, score.nrefs);
  nlohmann::ordered_json json = score_object("BLEU", score.score, width, signature);
  json["verbose_score"] = bleu_verbose_score(score);
  add_signature_fields(json, signature);
  json["exact"] = {{"score", score.score},           {"counts", score.counts},  {"totals", score.totals},
                   {"precisions", score.precisions}, {"bp", score.bp},          {"ratio", score.ratio},
                   {"hyp_len", score.hyp_len},       {"ref_len", score.ref_len}};
  return json;
}

nlohmann::ordered_json chrf_json(const ChrfScore& score, const ChrfOptions& options, int width) {
  const std::string signature = chrf_signature(options, score.nrefs);
  nlohmann::ordered_json json = score_object(chrf_name(score.beta, score.word_order), score.score, width, signature);
  add_signature_fields(json, signature);
  nlohmann::ordered_json statistics = nlohmann::ordered_json::array();
  for (const auto& order : score.statistics) statistics.push_back({order.hyp, order.ref, order.match});
  json["exact"] = {{"score", score.score}, {"statistics", std::move(statistics)}};
  return json;
}

std::vector<ScoreRecord> read_score_file(const std::filesystem::path& path) {
  const nlohmann::json file = read_json_file(path.string(), "the scores file");
  const nlohmann::json entries = file.is_array() ? file : nlohmann::json::array({file});
  std::vector<ScoreRecord> records;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const nlohmann::json& e = entries[i];
    const std::string where = "entry " + std::to_string(i + 1) + ": ";
    if (!e.is_object()) throw_in(path.string(), where + "not an object with name, score and signature");
    if (!e.contains("name") || !e["name"].is_string()) throw_in(path.string(), where + "\"name\" must be a string");
    if (!e.contains("score") || !e["score"].is_number()) throw_in(path.string(), where + "\"score\" must be a number");
    if (e.contains("signature") && !e["signature"].is_string())
      throw_in(path.string(), where + "\"signature\" must be a string");
    records.push_back({e["name"].get<std::string>(), e["score"].get<double>(), e.value("signature", "")});
  }
  return records;
}

}  // namespace attn::eval
