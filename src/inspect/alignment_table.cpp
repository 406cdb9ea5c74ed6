#include "inspect/alignment_table.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/number_format.h"
#include "inspect/attention_record.h"

namespace attn::inspect {

namespace {

std::string percent(double x) { return format_fixed(100 * x, 2); }

nlohmann::ordered_json score_json(const AlignmentScore& s) {
  return {{"precision", 100 * s.precision()},
          {"recall", 100 * s.recall()},
          {"aer", 100 * s.aer()},
          {"predicted", s.predicted},
          {"sure", s.sure},
          {"predicted_in_sure", s.predicted_in_sure},
          {"predicted_in_possible", s.predicted_in_possible}};
}

std::string score_columns(const AlignmentScore& s) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%9s  %6s  %6s", percent(s.precision()).c_str(), percent(s.recall()).c_str(),
                percent(s.aer()).c_str());
  return buffer;
}

}  // namespace

std::string score_table(const std::vector<NamedScore>& rows, bool json) {
  if (json) {
    nlohmann::ordered_json array = nlohmann::ordered_json::array();
    for (const auto& [name, s] : rows) {
      nlohmann::ordered_json row = {{"alignment", name}};
      row.update(score_json(s));
      array.push_back(std::move(row));
    }
    return array.dump(1) + "\n";
  }
  std::string text = "precision  recall     AER  alignment\n";
  for (const auto& [name, s] : rows) text += score_columns(s) + "  " + name + "\n";
  return text;
}

std::string sweep_table(const std::vector<SweepRow>& rows, bool json) {
  if (json) {
    nlohmann::ordered_json array = nlohmann::ordered_json::array();
    for (const SweepRow& row : rows) {
      nlohmann::ordered_json entry = {{"layer", row.layer}};
      entry["head"] = row.head == kMeanOfHeads ? nlohmann::ordered_json("mean") : nlohmann::ordered_json(row.head);
      entry.update(score_json(row.score));
      entry["best_in_layer"] = row.best;
      array.push_back(std::move(entry));
    }
    return array.dump(1) + "\n";
  }
  std::string text = "layer  head  precision  recall     AER\n";
  for (const SweepRow& row : rows) {
    const std::string head = row.head == kMeanOfHeads ? std::string("mean") : std::to_string(row.head);
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%5d  %4s  ", row.layer, head.c_str());
    text += buffer + score_columns(row.score) + (row.best ? "  *" : "") + "\n";
  }
  text += "* the lowest AER of the layer\n";
  return text;
}

}  // namespace attn::inspect
