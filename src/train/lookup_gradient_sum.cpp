#include "train/lookup_gradient_sum.h"

#include <algorithm>

#include "core/error.h"

namespace attn {

LookupGradientSum::LookupGradientSum(Backend& backend, int vocab, int dim)
    : backend_(backend),
      vocab_(vocab),
      dim_(dim),
      mine_(static_cast<std::size_t>(vocab), 0.0f),
      all_(static_cast<std::size_t>(vocab), 0.0f) {
  const std::int64_t n = static_cast<std::int64_t>(vocab) * dim;
  sum_.resize(backend, static_cast<std::size_t>(n));
  backend.fill(sum_.data(), n, 0.0f);
}

void LookupGradientSum::begin_update(std::span<const TokenBatch> batches) {
  std::fill(mine_.begin(), mine_.end(), 0.0f);
  summed_ = false;
  auto look_up = [&](const std::int32_t* ids, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) {
      ATTN_CHECK(ids[i] >= 0 && ids[i] < vocab_, "a token id outside the vocabulary");
      mine_[static_cast<std::size_t>(ids[i])] = 1.0f;
    }
  };
  for (const TokenBatch& b : batches) {
    look_up(b.src, static_cast<std::int64_t>(b.batch) * b.src_len);
    look_up(b.tgt_in, static_cast<std::int64_t>(b.batch) * b.tgt_len);
  }
}

std::vector<std::pair<std::int32_t, std::int32_t>> LookupGradientSum::runs(const std::vector<float>& flags) const {
  std::vector<std::pair<std::int32_t, std::int32_t>> r;
  for (std::int32_t row = 0; row < vocab_; ++row) {
    if (flags[static_cast<std::size_t>(row)] == 0) continue;
    if (!r.empty() && r.back().second == row)
      ++r.back().second;
    else
      r.emplace_back(row, row + 1);
  }
  return r;
}

std::int64_t LookupGradientSum::rows() const {
  return std::count_if(mine_.begin(), mine_.end(), [](float f) { return f != 0; });
}

void LookupGradientSum::add_batch(float* lookups) {
  for (const auto& [first, end] : runs(mine_)) {
    const std::int64_t at = static_cast<std::int64_t>(first) * dim_, n = static_cast<std::int64_t>(end - first) * dim_;
    backend_.accumulate(lookups + at, sum_.data() + at, n);
    backend_.fill(lookups + at, n, 0.0f);
  }
}

void LookupGradientSum::start_rows(dist::Communicator& ranks) {
  all_ = mine_;
  summed_ = true;
  ranks.start_sum(all_.data(), all_.size(), dist::WirePrecision::fp32);
}

void LookupGradientSum::sum_rows(dist::Communicator& ranks) {
  all_ = mine_;
  summed_ = true;
  ranks.sum(all_.data(), all_.size(), dist::WirePrecision::fp32);
}

void LookupGradientSum::add_to(float* embedding_grads, dist::Communicator& ranks, dist::WirePrecision wire) {
  ATTN_CHECK(ranks.size() == 1 || summed_, "the rows looked up are summed across the ranks first");
  const auto r = runs(ranks.size() > 1 ? all_ : mine_);
  if (ranks.size() > 1) {
    std::int64_t rows = 0;
    for (const auto& [first, end] : r) rows += end - first;
    packed_.resize(static_cast<std::size_t>(rows * dim_));
    std::int64_t off = 0;
    for (const auto& [first, end] : r) {
      const std::int64_t n = static_cast<std::int64_t>(end - first) * dim_;
      backend_.copy_to_host(packed_.data() + off, sum_.data() + static_cast<std::int64_t>(first) * dim_,
                            static_cast<std::size_t>(n) * sizeof(float));
      off += n;
    }
    ranks.sum(packed_.data(), packed_.size(), wire);
    off = 0;
    for (const auto& [first, end] : r) {
      const std::int64_t n = static_cast<std::int64_t>(end - first) * dim_;
      backend_.copy_to_device(sum_.data() + static_cast<std::int64_t>(first) * dim_, packed_.data() + off,
                              static_cast<std::size_t>(n) * sizeof(float));
      off += n;
    }
  }
  for (const auto& [first, end] : r) {
    const std::int64_t at = static_cast<std::int64_t>(first) * dim_, n = static_cast<std::int64_t>(end - first) * dim_;
    backend_.accumulate(sum_.data() + at, embedding_grads + at, n);
    backend_.fill(sum_.data() + at, n, 0.0f);
  }
}

}  // namespace attn
