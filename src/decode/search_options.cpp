#include "decode/search_options.h"

#include <charconv>
#include <cmath>
#include <sstream>

#include "core/error.h"

namespace attn {
namespace {

// The shortest text that reads back as `value` ("0.6", "nan", "inf").
std::string number_text(float value) {
  char buffer[32];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  return std::string(buffer, end);
}

std::string integer_rule(const char* field, int low, const std::string& high, int value) {
  return std::string(field) + " must be an integer from " + std::to_string(low) + " to " + high + " (got " +
         std::to_string(value) + ")";
}

std::string number_rule(const char* field, float high, float value) {
  return std::string(field) + " must be a finite number from 0 to " + number_text(high) + " (got " +
         number_text(value) + ")";
}

bool within(float value, float high) { return std::isfinite(value) && value >= 0 && value <= high; }

}  // namespace

std::optional<SearchOptionsProblem> check(const SearchOptions& o) {
  if (o.beam_size < 1 || o.beam_size > kMaxBeam)
    return SearchOptionsProblem{"beam", integer_rule("beam", 1, std::to_string(kMaxBeam), o.beam_size)};
  if (o.n_best < 1 || o.n_best > o.beam_size)
    return SearchOptionsProblem{"n_best",
                                integer_rule("n_best", 1, "the beam, " + std::to_string(o.beam_size), o.n_best)};
  if (!within(o.length_penalty, kMaxAlpha))
    return SearchOptionsProblem{"alpha", number_rule("alpha", kMaxAlpha, o.length_penalty)};
  if (!within(o.max_length_a, kMaxLengthA))
    return SearchOptionsProblem{"max_length_a", number_rule("max_length_a", kMaxLengthA, o.max_length_a)};
  if (o.max_length_b < 0 || o.max_length_b > kMaxLength)
    return SearchOptionsProblem{"max_length_b",
                                integer_rule("max_length_b", 0, std::to_string(kMaxLength), o.max_length_b)};
  if (o.max_length_a == 0 && o.max_length_b == 0)
    return SearchOptionsProblem{"max_length_a",
                                "max_length_a 0 and max_length_b 0 allow no output token: give max_length_a or "
                                "max_length_b > 0"};
  if (o.min_length < 0 || o.min_length > kMaxLength)
    return SearchOptionsProblem{"min_length", integer_rule("min_length", 0, std::to_string(kMaxLength), o.min_length)};
  return std::nullopt;
}

void validate(const SearchOptions& options) {
  if (const auto problem = check(options)) throw Error(problem->message, ErrorKind::invalid_argument);
}

std::string cache_key(const SearchOptions& options) {
  // Every member, by position: a member added to SearchOptions stops this from compiling.
  const auto& [beam_size, length_penalty, max_length_a, max_length_b, min_length, n_best, early_stop] = options;
  std::ostringstream k;
  k << std::hexfloat;  // exact: options that differ in the last bit of alpha never share a key
  k << beam_size << ' ' << length_penalty << ' ' << max_length_a << ' ' << max_length_b << ' ' << min_length << ' '
    << n_best << ' ' << early_stop;
  return k.str();
}

}  // namespace attn
