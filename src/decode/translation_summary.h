#pragma once
// What `attn translate` says on stderr when it is done: how many sentences, how fast, with which
// search, and with a shortlist how wide the output layer was on average.
#include <cstddef>
#include <string>

#include "decode/search_options.h"
#include "decode/batch_translator.h"

namespace attn {

// Adds `more` (one call's statistics) to `total`.
void add_statistics(BatchStatistics& total, const BatchStatistics& more);

// "translated S sentences (L lines) in T s: R sentences/s, W target tokens/s (beam B, alpha A)\n";
// `lines` counts the empty lines too, which are no sentences.
std::string translation_summary(const BatchStatistics& total, std::size_t lines, const SearchOptions& search);

// "shortlist: P output pieces per batch on average (k K, B batches)\n", P rounded down.
std::string shortlist_summary(const BatchStatistics& total, int shortlist_k);

}  // namespace attn
