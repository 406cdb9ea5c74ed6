// The ranks' sum of floats on the wire, checked by hand-worked values: run it as 2 ranks
// (mpirun -np 2 wire_sum_check; Distributed.TheGradientOnTheWireInBf16IsRoundedAsWorkedByHand).
// Rank 0 and rank 1 each hold one value of every pair below; after sum() (blocking) and after
// start_sum() + wait_sums() (the overlapped buckets' way, in two pieces), each rank must hold:
//   fp32: the float sum x0 + x1;
//   bf16: each value rounded to bfloat16 (8 significant bits, to nearest even), their sum rounded to
//         bfloat16 again, as worked out beside each pair.
// Exits 0 when both ranks hold exactly that, else 1 naming each miss.
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "train/dist/communicator.h"

namespace {

struct Pair {
  float x0, x1;
  float bf16_sum;
};
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// bf16's spacing is 2^-7 in [1, 2), 2^-6 in [2, 4).
const std::vector<Pair> kPairs = {
    {1.0f, 0x1p-8f, 1.0f},                      // 1 + 2^-8: halfway between 1 and 1 + 2^-7, to even: 1
    {1.0f, 3 * 0x1p-9f, 1.0f + 0x1p-7f},        // 1 + 0.75 of a step: up
    {1.0f + 0x1p-7f, 0x1p-8f, 1.0f + 0x1p-6f},  // halfway between an odd (1 + 2^-7) and an even step: up
    {1.00390625f, 0.0f, 1.0f},                  // 1 + 2^-8 rounded before it is sent: 1
    {3.0f, -3.0f, 0.0f},                        // exact
    {-2.5f, 0.3f, -2.203125f},                  // 0.3 -> 0.30078125 (154/512); -2.19921875 = -140.75 steps of
                                                // 2^-6 -> -141 steps
    {0.1f, 0.2f, 0.30078125f},                  // 0.10009765625 + 0.2001953125 = 0.30029296875 -> 0.30078125
    {kInf, 1.0f, kInf},
    {kNaN, 1.0f, kNaN},
};

}  // namespace

int main() {
  using attn::dist::WirePrecision;
  const auto ranks = attn::dist::world();
  if (ranks->size() != 2) {
    std::fprintf(stderr, "wire_sum_check: run it as 2 ranks (mpirun -np 2), not %d\n", ranks->size());
    return 2;
  }
  const int rank = ranks->rank();
  // The pairs, then 100000 values of 1 on rank 0 and (i % 3)·2^-8 on rank 1 (sums 1, 1 + 2^-8 -> 1,
  // 1 + 2^-7), long enough for MPI to cut the buffer into segments.
  std::vector<float> mine, fp32_sum, bf16_sum;
  for (const Pair& p : kPairs) {
    mine.push_back(rank == 0 ? p.x0 : p.x1);
    fp32_sum.push_back(p.x0 + p.x1);
    bf16_sum.push_back(p.bf16_sum);
  }
  for (int i = 0; i < 100000; ++i) {
    const float x1 = static_cast<float>(i % 3) * 0x1p-8f;
    mine.push_back(rank == 0 ? 1.0f : x1);
    fp32_sum.push_back(1.0f + x1);
    bf16_sum.push_back(i % 3 == 2 ? 1.0f + 0x1p-7f : 1.0f);
  }
  int misses = 0;
  for (const WirePrecision wire : {WirePrecision::fp32, WirePrecision::bf16})
    for (const bool started : {false, true}) {
      std::vector<float> x = mine;
      if (started) {
        const std::size_t half = x.size() / 2;
        ranks->start_sum(x.data() + half, x.size() - half, wire);  // the buffer's end first, as the buckets go
        ranks->start_sum(x.data(), half, wire);
        ranks->wait_sums();
      } else {
        ranks->sum(x.data(), x.size(), wire);
      }
      const std::vector<float>& want = wire == WirePrecision::fp32 ? fp32_sum : bf16_sum;
      for (std::size_t i = 0; i < x.size(); ++i) {
        const bool same = std::isnan(want[i]) ? std::isnan(x[i]) : x[i] == want[i];
        if (!same && ++misses <= 10)
          std::fprintf(stderr, "wire_sum_check rank %d: %s %s: element %zu is %.9g, want %.9g\n", rank,
                       attn::dist::to_string(wire), started ? "start_sum" : "sum", i, static_cast<double>(x[i]),
                       static_cast<double>(want[i]));
      }
    }
  std::printf("wire_sum_check rank %d: %s\n", rank, misses ? (std::to_string(misses) + " misses").c_str() : "ok");
  return misses ? 1 : 0;
}
