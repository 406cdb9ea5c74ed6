#pragma once
// Reads a whole JSON file; errors name the file ("cannot open <what>", "not valid JSON: ..."). And
// numbers read from one, checked: an error names the file and the key.
#include <cmath>
#include <cstdio>
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

// A whole number from lo to hi: a JSON integer, or a number without a fraction (1e3). Anything else
// throws Error "<source>: 'key' must be a whole number from lo to hi, got <value>".
template <class Json>  // nlohmann::json or ordered_json
long long json_whole_number(const Json& v, const std::string& source, const std::string& key, long long lo,
                            long long hi) {
  const bool whole = v.is_number_integer() || (v.is_number_float() && std::isfinite(v.template get<double>()) &&
                                               v.template get<double>() == std::floor(v.template get<double>()));
  if (!whole || v.template get<double>() < static_cast<double>(lo) ||
      v.template get<double>() > static_cast<double>(hi))
    throw_in(source, "'" + key + "' must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) +
                         ", got " + v.dump());
  return v.is_number_integer() ? v.template get<long long>() : static_cast<long long>(v.template get<double>());
}

// A finite number from lo to hi; throws Error "<source>: 'key' must be a number from lo to hi, got <value>".
template <class Json>
double json_number(const Json& v, const std::string& source, const std::string& key, double lo, double hi) {
  if (!v.is_number() || !std::isfinite(v.template get<double>()) || v.template get<double>() < lo ||
      v.template get<double>() > hi) {
    char range[64];
    std::snprintf(range, sizeof range, "%g to %g", lo, hi);
    throw_in(source, "'" + key + "' must be a number from " + range + ", got " + v.dump());
  }
  return v.template get<double>();
}

}  // namespace attn
