#pragma once
// SearchOptions is part of the public API (include/attn/search_options.h). Here: the one rule for
// its values, which every face applies before searching (the command line, the service's /v1 and
// LibreTranslate routes, the C++ API and through it Python), and the one key that tells two sets
// of options apart.
//
// The limits, with the fields named as the command line (--beam, --alpha, --n-best, ...), /v1's
// JSON and Python's keyword arguments name them (SearchOptions' member in brackets):
//   beam          (beam_size)       an integer from 1 to kMaxBeam
//   n_best        (n_best)          an integer from 1 to the beam: n_best above the beam is refused,
//                                   on every face (the n best are taken from the beam; no face cuts
//                                   it down silently)
//   alpha         (length_penalty)  a finite number from 0 to kMaxAlpha
//   max_length_a  (max_length_a)    a finite number from 0 to kMaxLengthA
//   max_length_b  (max_length_b)    an integer from 0 to kMaxLength
//   min_length    (min_length)      an integer from 0 to kMaxLength
//   and max_length_a and max_length_b not both 0 (that allows no output token).
// Output lengths are cut to the model's max_positions at search time whatever a and b say.
#include <optional>
#include <string>

#include "attn/search_options.h"

namespace attn {

// Each hypothesis of the beam holds its own key/value caches: 128 keeps n-best lists of 100 (for
// reranking) within reach and a single request of the service from asking for thousands.
inline constexpr int kMaxBeam = 128;
// GNMT's α is about 0.6–1; beyond 10 the penalty only sorts by length.
inline constexpr float kMaxAlpha = 10;
// Output tokens per source token.
inline constexpr float kMaxLengthA = 1000;
// Output tokens (max_length_b and min_length): 2^20.
inline constexpr int kMaxLength = 1 << 20;

// What is wrong with `options`, or nullopt when they are within the limits above. `field` is the
// field's name as above; the message starts with it and says the value and the rule, e.g.
// "n_best must be an integer from 1 to the beam, 4 (got 5)".
struct SearchOptionsProblem {
  std::string field;
  std::string message;
};
std::optional<SearchOptionsProblem> check(const SearchOptions& options);

// Throws Error(check(options)->message, ErrorKind::invalid_argument) when check finds a problem.
void validate(const SearchOptions& options);

// A text equal for two options exactly when every field is equal (floats compared bit for bit):
// for caches of translators and for the service's batches, which only options with equal keys
// share. A field added to SearchOptions must be added here (the compiler insists).
std::string cache_key(const SearchOptions& options);

}  // namespace attn
