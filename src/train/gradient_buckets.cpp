#include "train/gradient_buckets.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace attn {

GradientBuckets::GradientBuckets(dist::Communicator& ranks, Backend& backend, float* grads, std::int64_t n,
                                 std::int64_t bucket_floats, dist::WirePrecision wire, const float* earlier,
                                 std::int64_t apart_end)
    : ranks_(ranks),
      backend_(backend),
      grads_(grads),
      n_(n),
      bucket_(bucket_floats),
      apart_end_(apart_end),
      started_from_(n),
      wire_(wire),
      earlier_(earlier) {
  ATTN_CHECK(bucket_floats > 0, "a gradient bucket holds at least one float");
  ATTN_CHECK(apart_end >= 0 && apart_end <= n, "the part summed apart lies inside the gradient");
}

std::int64_t GradientBuckets::floats_of_mb(double mb) {
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(mb * 1048576.0 / sizeof(float))));
}

void GradientBuckets::start_range(std::int64_t begin, std::int64_t end) {
  if (earlier_) backend_.accumulate(earlier_ + begin, grads_ + begin, end - begin);
  ranks_.start_sum(grads_ + begin, static_cast<std::size_t>(end - begin), wire_);
  ++sums_;
}

void GradientBuckets::final_apart() {
  if (apart_started_) return;
  apart_started_ = true;
  for (std::int64_t begin = 0; begin < apart_end_; begin += bucket_)
    start_range(begin, std::min(apart_end_, begin + bucket_));
}

void GradientBuckets::final_from(std::int64_t first) {
  const std::int64_t from = std::max(first, apart_end_);
  while (started_from_ > from) {
    const std::int64_t begin = std::max(from, started_from_ - bucket_);
    start_range(begin, started_from_);
    started_from_ = begin;
  }
  if (first == 0) final_apart();
}

void GradientBuckets::finish() {
  final_from(0);
  ranks_.wait_sums();
}

}  // namespace attn
