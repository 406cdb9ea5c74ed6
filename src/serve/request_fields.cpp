#include "serve/request_fields.h"

#include <cmath>
#include <limits>

#include "core/utf8.h"
#include "serve/api_error.h"

namespace attn::serve {

using nlohmann::json;

void invalid_request(const std::string& what) { throw ApiError(400, "Invalid request: " + what); }

std::string quoted(const json& value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  return text.size() > 60 ? text.substr(0, 57) + "..." : text;
}

std::size_t characters(const std::string& text) {
  std::size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

bool empty_value(const json& v) {
  return v.is_null() || (v.is_string() && v.get_ref<const std::string&>().empty()) || (v.is_array() && v.empty());
}

std::vector<std::string> texts_of(const json& q) {
  std::vector<std::string> texts;
  if (q.is_string()) {
    texts.push_back(q.get<std::string>());
  } else if (q.is_array()) {
    for (std::size_t i = 0; i < q.size(); ++i) {
      if (!q[i].is_string()) invalid_request("q[" + std::to_string(i) + "] is not a string");
      texts.push_back(q[i].get<std::string>());
    }
  } else {
    invalid_request("q must be a string or an array of strings");
  }
  for (std::size_t i = 0; i < texts.size(); ++i)
    if (auto bad = find_invalid_utf8(texts[i]))
      invalid_request((q.is_array() ? "q[" + std::to_string(i) + "]" : std::string("q")) +
                      " is not valid UTF-8 (byte " + std::to_string(*bad + 1) + ")");
  return texts;
}

void check_text_limits(const std::vector<std::string>& texts, const Limits& limits) {
  if (texts.size() > static_cast<std::size_t>(limits.max_texts))
    invalid_request("request (" + std::to_string(texts.size()) + ") exceeds text limit (" +
                    std::to_string(limits.max_texts) + ")");
  std::size_t chars = 0;
  for (const auto& t : texts) chars += characters(t);
  if (chars > static_cast<std::size_t>(limits.max_chars))
    invalid_request("request (" + std::to_string(chars) + ") exceeds text limit (" + std::to_string(limits.max_chars) +
                    ")");
}

namespace {

// Whether the value is an integer from low to high: JSON's integers past 2^63 - 1 come as unsigned
// 64-bit numbers, which read as signed would wrap to negatives (2^64 - 1 to -1).
bool integer_within(const json& value, long long low, long long high) {
  if (value.is_number_unsigned())
    return value.get<unsigned long long>() <= static_cast<unsigned long long>(high) &&
           (low <= 0 || value.get<unsigned long long>() >= static_cast<unsigned long long>(low));
  return value.is_number_integer() && value.get<long long>() >= low && value.get<long long>() <= high;
}

}  // namespace

int integer_field(const json& request, const char* key, int fallback, int low, int high) {
  const auto it = request.find(key);
  if (it == request.end() || it->is_null()) return fallback;
  if (!integer_within(*it, low, high))
    invalid_request(std::string(key) + " must be an integer from " + std::to_string(low) + " to " +
                    std::to_string(high) + " (got " + quoted(*it) + ")");
  return it->get<int>();
}

double number_field(const json& request, const char* key, double fallback, double low, double high) {
  const auto it = request.find(key);
  if (it == request.end() || it->is_null()) return fallback;
  if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < low || it->get<double>() > high)
    invalid_request(std::string(key) + " must be a number from " + json(low).dump() + " to " + json(high).dump() +
                    " (got " + quoted(*it) + ")");
  return it->get<double>();
}

int integer_field(const json& request, const char* key, int fallback) {
  const auto it = request.find(key);
  if (it == request.end() || it->is_null()) return fallback;
  if (!integer_within(*it, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()))
    invalid_request(std::string(key) + " must be an integer (got " + quoted(*it) + ")");
  return it->get<int>();
}

float float_field(const json& request, const char* key, float fallback) {
  const auto it = request.find(key);
  if (it == request.end() || it->is_null()) return fallback;
  if (!it->is_number() || !(std::abs(it->get<double>()) <= std::numeric_limits<float>::max()))
    invalid_request(std::string(key) + " must be a number (got " + quoted(*it) + ")");
  return static_cast<float>(it->get<double>());
}

const std::string* string_field(const json& request, const char* key) {
  const auto it = request.find(key);
  if (it == request.end() || it->is_null()) return nullptr;
  if (!it->is_string()) invalid_request(std::string(key) + " must be a string (got " + quoted(*it) + ")");
  return &it->get_ref<const std::string&>();
}

}  // namespace attn::serve
