#pragma once
// sacreBLEU's JSON for scores: what `attn bleu --json` writes (as `sacrebleu --format json` does)
// and what `attn report` reads back.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/bleu.h"
#include "eval/chrf.h"

namespace attn::eval {

// One metric's object: "name", "score" rounded to `width` decimals as printed, "signature", each
// signature field as its own key ("nrefs", "case", ...), sacreBLEU's "verbose_score" for BLEU, and
// "exact": the unrounded score with the statistics it came from.
nlohmann::ordered_json bleu_json(const BleuScore& score, const BleuOptions& options, int width);
nlohmann::ordered_json chrf_json(const ChrfScore& score, const ChrfOptions& options, int width);

// What a reader needs of one metric's object.
struct ScoreRecord {
  std::string name;  // "BLEU", "chrF2", "chrF2++"
  double score = 0;
  std::string signature;  // empty where the file has none
};

// Reads a scores file: an array of metric objects (possibly empty), or one object (sacreBLEU
// writes one for a single metric); only "name" and "score" are required. Throws attn::Error
// naming the file and the entry and key at fault.
std::vector<ScoreRecord> read_score_file(const std::filesystem::path& path);

}  // namespace attn::eval
