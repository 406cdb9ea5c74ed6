#include "inspect/ibm_model1.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "core/error.h"

namespace attn::inspect {

namespace {

using IdSentence = std::vector<int>;

int intern(std::unordered_map<std::string, int, std::hash<std::string>>& ids, const std::string& word, int first) {
  return ids.try_emplace(word, first + static_cast<int>(ids.size())).first->second;
}

}  // namespace

std::vector<std::string> split_words(std::string_view line) {
  std::vector<std::string> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    std::size_t end = i;
    while (end < line.size() && line[end] != ' ' && line[end] != '\t') ++end;
    if (end > i) words.emplace_back(line.substr(i, end - i));
    i = end;
  }
  return words;
}

IbmModel1 IbmModel1::train(const std::vector<std::vector<std::string>>& source,
                           const std::vector<std::vector<std::string>>& target, const IbmModel1Options& options,
                           std::vector<double>* log_likelihoods) {
  ATTN_CHECK(source.size() == target.size(), "IBM Model 1 needs one target sentence per source sentence");
  ATTN_CHECK(options.iterations >= 0, "IBM Model 1 iterations must be >= 0");

  // Integer ids; every source sentence gets NULL (id 0) in front.
  std::unordered_map<std::string, int, std::hash<std::string>> source_ids, target_ids;
  std::vector<IdSentence> sources(source.size()), targets(target.size());
  for (std::size_t k = 0; k < source.size(); ++k) {
    sources[k].push_back(0);
    for (const std::string& word : source[k]) sources[k].push_back(intern(source_ids, word, 1));
    for (const std::string& word : target[k]) targets[k].push_back(intern(target_ids, word, 0));
  }
  IbmModel1 model;
  for (auto& [word, id] : source_ids) model.source_vocabulary_.emplace(word, id);
  for (auto& [word, id] : target_ids) model.target_vocabulary_.emplace(word, id);

  // The pair index of every (target position, source position) of every sentence, found once so
  // that each EM iteration is a sweep over plain arrays. Sentence k's block is [f_j][e_i].
  std::vector<std::uint32_t> pair_of;
  std::vector<std::size_t> block(sources.size() + 1, 0);
  for (std::size_t k = 0; k < sources.size(); ++k) {
    for (int f : targets[k]) {
      for (int e : sources[k]) {
        const std::uint32_t at = model.pairs_.insert(e, f);
        if (at == model.pair_sources_.size()) model.pair_sources_.push_back(e);
        pair_of.push_back(at);
      }
    }
    block[k + 1] = pair_of.size();
  }
  const double uniform = target_ids.empty() ? 0.0 : 1.0 / static_cast<double>(target_ids.size());
  model.probabilities_.assign(model.pair_sources_.size(), uniform);

  // EM. The E step spreads each target word over the source words (and NULL) in proportion to t;
  // the M step renormalises the expected counts per source word. The corpus log-likelihood falls
  // out of the E step's denominators.
  std::vector<double> counts(model.probabilities_.size());
  std::vector<double> totals(source_ids.size() + 1);
  const auto expectation = [&](bool accumulate) {
    double log_likelihood = 0;
    for (std::size_t k = 0; k < sources.size(); ++k) {
      const std::size_t l = sources[k].size();  // source words + NULL
      for (std::size_t j = 0; j < targets[k].size(); ++j) {
        const std::uint32_t* pairs = pair_of.data() + block[k] + j * l;
        double denominator = 0;
        for (std::size_t i = 0; i < l; ++i) denominator += model.probabilities_[pairs[i]];
        log_likelihood += std::log(denominator / static_cast<double>(l));
        if (!accumulate) continue;
        for (std::size_t i = 0; i < l; ++i) {
          const double share = model.probabilities_[pairs[i]] / denominator;
          counts[pairs[i]] += share;
          totals[sources[k][i]] += share;
        }
      }
    }
    return log_likelihood;
  };
  if (log_likelihoods) log_likelihoods->clear();
  for (int iteration = 0; iteration < options.iterations; ++iteration) {
    std::fill(counts.begin(), counts.end(), 0.0);
    std::fill(totals.begin(), totals.end(), 0.0);
    const double log_likelihood = expectation(true);
    if (log_likelihoods) log_likelihoods->push_back(log_likelihood);
    for (std::size_t at = 0; at < counts.size(); ++at) {
      const double total = totals[model.pair_sources_[at]];
      model.probabilities_[at] = total > 0 ? counts[at] / total : 0.0;
    }
  }
  if (log_likelihoods) log_likelihoods->push_back(expectation(false));
  return model;
}

std::uint64_t IbmModel1::PairTable::key(int source, int target) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(source)) << 32) | static_cast<std::uint32_t>(target);
}

std::size_t IbmModel1::PairTable::slot(std::uint64_t key) const {
  // Fibonacci hashing: the top bits of key · 2^64/φ, as many as the table is wide.
  const int bits = std::countr_zero(keys_.size());
  return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

std::uint32_t IbmModel1::PairTable::find(int source, int target) const {
  if (keys_.empty() || source < 0 || target < 0) return kMissing;
  const std::uint64_t wanted = key(source, target);
  for (std::size_t at = slot(wanted);; at = (at + 1) & (keys_.size() - 1)) {
    if (keys_[at] == wanted) return values_[at];
    if (keys_[at] == kFree) return kMissing;
  }
}

std::uint32_t IbmModel1::PairTable::insert(int source, int target) {
  if (2 * (static_cast<std::size_t>(size_) + 1) > keys_.size()) grow();  // load factor <= 1/2
  const std::uint64_t wanted = key(source, target);
  for (std::size_t at = slot(wanted);; at = (at + 1) & (keys_.size() - 1)) {
    if (keys_[at] == wanted) return values_[at];
    if (keys_[at] == kFree) {
      ATTN_CHECK(size_ < kMissing - 1, "IBM Model 1: too many word pairs");
      keys_[at] = wanted;
      values_[at] = size_;
      return size_++;
    }
  }
}

void IbmModel1::PairTable::grow() {
  std::vector<std::uint64_t> keys = std::move(keys_);
  std::vector<std::uint32_t> values = std::move(values_);
  keys_.assign(keys.empty() ? 1024 : 2 * keys.size(), kFree);
  values_.assign(keys_.size(), 0);
  for (std::size_t old = 0; old < keys.size(); ++old) {
    if (keys[old] == kFree) continue;
    std::size_t at = slot(keys[old]);
    while (keys_[at] != kFree) at = (at + 1) & (keys_.size() - 1);
    keys_[at] = keys[old];
    values_[at] = values[old];
  }
}

double IbmModel1::t(int source, int target) const {
  const std::uint32_t at = pairs_.find(source, target);
  return at == PairTable::kMissing ? 0.0 : probabilities_[at];
}

int IbmModel1::source_id(std::string_view word) const {
  const auto it = source_vocabulary_.find(word);
  return it == source_vocabulary_.end() ? -1 : it->second;
}

int IbmModel1::target_id(std::string_view word) const {
  const auto it = target_vocabulary_.find(word);
  return it == target_vocabulary_.end() ? -1 : it->second;
}

double IbmModel1::probability(std::string_view target_word, std::string_view source_word) const {
  return t(source_id(source_word), target_id(target_word));
}

double IbmModel1::null_probability(std::string_view target_word) const { return t(0, target_id(target_word)); }

void IbmModel1::for_each_translation(
    const std::function<void(const std::string& source, const std::string& target, double t)>& visit) const {
  std::vector<const std::string*> source_words(source_vocabulary_.size() + 1, nullptr),
      target_words(target_vocabulary_.size(), nullptr);
  for (const auto& [word, id] : source_vocabulary_) source_words[static_cast<std::size_t>(id)] = &word;
  for (const auto& [word, id] : target_vocabulary_) target_words[static_cast<std::size_t>(id)] = &word;
  pairs_.for_each([&](int source, int target, std::uint32_t index) {
    if (source > 0)
      visit(*source_words[static_cast<std::size_t>(source)], *target_words[static_cast<std::size_t>(target)],
            probabilities_[index]);
  });
}

Alignment IbmModel1::viterbi(const std::vector<std::string>& source, const std::vector<std::string>& target) const {
  std::vector<int> source_ids;
  for (const std::string& word : source) source_ids.push_back(source_id(word));
  Alignment links;
  for (std::size_t j = 0; j < target.size(); ++j) {
    const int f = target_id(target[j]);
    int best = -1;
    double best_t = 0;
    for (std::size_t i = 0; i < source_ids.size(); ++i) {
      const double value = t(source_ids[i], f);
      if (value > best_t) {
        best = static_cast<int>(i);
        best_t = value;
      }
    }
    if (best >= 0 && best_t >= t(0, f)) links.push_back({best, static_cast<int>(j)});
  }
  normalize(links);
  return links;
}

}  // namespace attn::inspect
