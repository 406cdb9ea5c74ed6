#pragma once
// Reading the fields of a request's JSON body, for both APIs: every wrong type or value is an
// ApiError 400 "Invalid request: ..." that names the field and quotes what was given.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve/serve_options.h"

namespace attn::serve {

// Throws ApiError(400, "Invalid request: " + what).
[[noreturn]] void invalid_request(const std::string& what);

// A value of the request as its error messages quote it: at most 60 characters.
std::string quoted(const nlohmann::json& value);

// Unicode characters (code points) of valid UTF-8, as LibreTranslate (Python's len) counts them.
std::size_t characters(const std::string& text);

// Null, "", or []: what LibreTranslate takes for a missing parameter.
bool empty_value(const nlohmann::json& value);

// q: a string or an array of strings, each valid UTF-8 (a form's values were not checked yet).
std::vector<std::string> texts_of(const nlohmann::json& q);

// At most limits.max_texts texts and limits.max_chars characters in all.
void check_text_limits(const std::vector<std::string>& texts, const Limits& limits);

// Optional fields: `fallback` when absent or null; otherwise of the type and within the range.
int integer_field(const nlohmann::json& request, const char* key, int fallback, int low, int high);
double number_field(const nlohmann::json& request, const char* key, double fallback, double low, double high);
// Of the type only (an int; a number a float holds), for fields whose range is checked elsewhere.
int integer_field(const nlohmann::json& request, const char* key, int fallback);
float float_field(const nlohmann::json& request, const char* key, float fallback);
// Null when absent; points into `request`.
const std::string* string_field(const nlohmann::json& request, const char* key);

}  // namespace attn::serve
