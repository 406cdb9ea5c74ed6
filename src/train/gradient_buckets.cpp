#include "train/gradient_buckets.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace attn {

GradientBuckets::GradientBuckets(dist::Communicator& ranks, Backend& backend, float* grads, std::int64_t n,
                                 std::int64_t bucket_floats, dist::WirePrecision wire, const float* earlier)
    : ranks_(ranks), backend_(backend), grads_(grads), n_(n), bucket_(bucket_floats), wire_(wire), earlier_(earlier) {
  ATTN_CHECK(bucket_floats > 0, "a gradient bucket holds at least one float");
}

std::int64_t GradientBuckets::floats_of_mb(double mb) {
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(mb * 1048576.0 / sizeof(float))));
}

int GradientBuckets::buckets() const { return static_cast<int>((n_ + bucket_ - 1) / bucket_); }

std::int64_t GradientBuckets::bucket_begin(int bucket) const {
  return std::max<std::int64_t>(0, n_ - (bucket + 1) * bucket_);
}

void GradientBuckets::start(int bucket) {
  const std::int64_t begin = bucket_begin(bucket), end = n_ - static_cast<std::int64_t>(bucket) * bucket_;
  if (earlier_) backend_.accumulate(earlier_ + begin, grads_ + begin, end - begin);
  ranks_.start_sum(grads_ + begin, static_cast<std::size_t>(end - begin), wire_);
}

void GradientBuckets::final_from(std::int64_t first) {
  while (started_ < buckets() && bucket_begin(started_) >= first) start(started_++);
}

void GradientBuckets::finish() {
  while (started_ < buckets()) start(started_++);
  ranks_.wait_sums();
}

}  // namespace attn
