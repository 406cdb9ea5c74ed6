#pragma once
// Reads a whole JSON file; errors name the file ("cannot open <what>", "not valid JSON: ...").
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace attn {

inline nlohmann::json read_json_file(const std::string& path, const std::string& what) {
  std::ifstream in(path);
  if (!in) throw_in(path, "cannot open " + what);
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for a number like 1e999
    throw_in(path, std::string("not valid JSON: ") + e.what());
  }
}

}  // namespace attn
