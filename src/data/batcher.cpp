#include "data/batcher.h"

#include <algorithm>
#include <tuple>

#include "core/error.h"
#include "data/vocabulary.h"

namespace attn::data {
namespace {

// SplitMix64 (Steele, Lea & Flood 2014): a fixed, portable generator, so that batches are the
// same on every platform and standard library.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n), n > 0, without modulo bias.
  std::uint64_t below(std::uint64_t n) {
    const std::uint64_t threshold = (0 - n) % n;  // 2^64 mod n: values under it would favour small results
    for (;;) {
      const std::uint64_t x = next();
      if (x >= threshold) return x % n;
    }
  }

 private:
  std::uint64_t state_;
};

// Independent streams for the two random choices of an epoch.
enum class Stream : std::uint64_t { kTieBreak = 1, kBatchOrder = 2 };

SplitMix64 generator(std::uint64_t seed, std::uint64_t epoch, Stream stream) {
  SplitMix64 mixer(seed);
  const std::uint64_t a = mixer.next() ^ epoch;
  SplitMix64 epoch_mixer(a);
  return SplitMix64(epoch_mixer.next() ^ static_cast<std::uint64_t>(stream));
}

// Pairs sort by their longer side first, then pairs whose source is the longer side come before
// those whose target is, each by their shorter side: neighbours then match on both sides, which
// keeps the padding of both low; bench/data_pipeline_bench prints it per batch size (the order
// was chosen over sorting by the longer side only, or by the source only, which pad more).
struct SortEntry {
  std::uint32_t longer;
  std::uint32_t target_is_longer;  // 0 or 1
  std::uint32_t shorter;
  std::uint64_t tie_break;
  std::uint32_t pair;

  auto key() const { return std::tie(longer, target_is_longer, shorter, tie_break, pair); }
};

}  // namespace

Batcher::Batcher(const ParallelCorpus& corpus, BatchingOptions options) : corpus_(corpus), options_(options) {
  for (std::uint32_t pair = 0; pair < corpus_.size(); ++pair) {
    const std::size_t cost = std::max(source_cost(pair), target_cost(pair));
    if (cost > options_.batch_tokens) {
      throw Error("batch_tokens " + std::to_string(options_.batch_tokens) + " cannot hold line " +
                  std::to_string(corpus_.line_number(pair)) + " of " + corpus_.options().source_file.string() + " / " +
                  corpus_.options().target_file.string() + " (" + std::to_string(cost) +
                  " tokens): raise batch_tokens or lower the corpus's max_tokens");
    }
  }
}

EpochBatches Batcher::epoch(std::uint64_t epoch) const {
  // Sort by length; random tie breaks give other batch-mates each epoch at no cost in padding.
  std::vector<SortEntry> entries(corpus_.size());
  auto tie_breaks = generator(options_.seed, epoch, Stream::kTieBreak);
  for (std::uint32_t pair = 0; pair < entries.size(); ++pair) {
    const auto source = static_cast<std::uint32_t>(source_cost(pair));
    const auto target = static_cast<std::uint32_t>(target_cost(pair));
    entries[pair] = {std::max(source, target), target > source ? 1u : 0u, std::min(source, target), tie_breaks.next(),
                     pair};
  }
  std::sort(entries.begin(), entries.end(), [](const SortEntry& a, const SortEntry& b) { return a.key() < b.key(); });

  // Cut greedily: a pair joins the open batch if the batch, padded to its new longest sentences,
  // stays within the budget on both sides.
  EpochBatches batches;
  batches.pairs_.reserve(entries.size());
  std::size_t begin = 0, longest_source = 0, longest_target = 0;
  for (const auto& entry : entries) {
    const std::size_t n = batches.pairs_.size() - begin + 1;
    const std::size_t source = std::max(longest_source, source_cost(entry.pair));
    const std::size_t target = std::max(longest_target, target_cost(entry.pair));
    if (n > 1 && (n * source > options_.batch_tokens || n * target > options_.batch_tokens)) {
      batches.ranges_.emplace_back(begin, batches.pairs_.size());
      begin = batches.pairs_.size();
      longest_source = source_cost(entry.pair);
      longest_target = target_cost(entry.pair);
    } else {
      longest_source = source;
      longest_target = target;
    }
    batches.pairs_.push_back(entry.pair);
  }
  if (begin < batches.pairs_.size()) batches.ranges_.emplace_back(begin, batches.pairs_.size());

  // Fisher-Yates shuffle of the batch order.
  auto order = generator(options_.seed, epoch, Stream::kBatchOrder);
  for (std::size_t i = batches.ranges_.size(); i > 1; --i) {
    std::swap(batches.ranges_[i - 1], batches.ranges_[order.below(i)]);
  }
  return batches;
}

void Batcher::fill(std::span<const std::uint32_t> pairs, Batch& batch) const {
  batch.assign(
      static_cast<int>(pairs.size()), [&](int row) { return corpus_.source(pairs[static_cast<std::size_t>(row)]); },
      [&](int row) { return corpus_.target(pairs[static_cast<std::size_t>(row)]); });
  batch.line_numbers.resize(pairs.size());
  for (std::size_t row = 0; row < pairs.size(); ++row) batch.line_numbers[row] = corpus_.line_number(pairs[row]);
}

BatchingStatistics Batcher::statistics(const EpochBatches& batches) const {
  BatchingStatistics stats;
  stats.batches = batches.size();
  for (std::size_t k = 0; k < batches.size(); ++k) {
    const auto pairs = batches.pairs(k);
    std::size_t longest_source = 0, longest_target = 0;
    for (const auto pair : pairs) {
      stats.source_tokens += source_cost(pair);
      stats.target_tokens += target_cost(pair);
      longest_source = std::max(longest_source, source_cost(pair));
      longest_target = std::max(longest_target, target_cost(pair));
    }
    stats.pairs += pairs.size();
    stats.source_slots += pairs.size() * longest_source;
    stats.target_slots += pairs.size() * longest_target;
    stats.largest_batch = std::max(stats.largest_batch, pairs.size());
  }
  return stats;
}

}  // namespace attn::data
