#include "decode/translation_summary.h"

#include <algorithm>
#include <cstdio>

namespace attn {

void add_statistics(BatchStatistics& total, const BatchStatistics& more) {
  total.sentences += more.sentences;
  total.source_tokens += more.source_tokens;
  total.target_tokens += more.target_tokens;
  total.seconds += more.seconds;
  total.batches += more.batches;
  total.output_rows += more.output_rows;
}

std::string translation_summary(const BatchStatistics& total, std::size_t lines, const SearchOptions& search) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "translated %lld sentences (%lld lines) in %.2f s: %.1f sentences/s, %.0f target tokens/s "
                "(beam %d, alpha %.2f)\n",
                static_cast<long long>(total.sentences), static_cast<long long>(lines), total.seconds,
                total.sentences / std::max(total.seconds, 1e-9), total.target_tokens / std::max(total.seconds, 1e-9),
                search.beam_size, search.length_penalty);
  return buf;
}

std::string shortlist_summary(const BatchStatistics& total, int shortlist_k) {
  return "shortlist: " + std::to_string(total.output_rows / std::max<std::int64_t>(total.batches, 1)) +
         " output pieces per batch on average (k " + std::to_string(shortlist_k) + ", " +
         std::to_string(total.batches) + " batches)\n";
}

}  // namespace attn
