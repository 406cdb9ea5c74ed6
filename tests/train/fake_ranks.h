#pragma once
// Two ranks inside one test process: rank 0 of two, the other rank played by the buffers a test
// gives in the order of its sums (sum() and start_sum() add them); what rank 0 sends is recorded.
#include <gtest/gtest.h>

#include <cstdlib>
#include <deque>
#include <string>
#include <vector>

#include "train/dist/communicator.h"

namespace attn::testing {

class TwoRanks final : public dist::Communicator {
 public:
  std::deque<std::vector<float>> other;  // what rank 1 sends, sum by sum
  std::vector<std::vector<float>> sent;  // what this rank sent, sum by sum
  bool other_sends_zeros = false;        // instead of `other`
  int rank() const override { return 0; }
  int size() const override { return 2; }
  std::string description() const override { return "two ranks (test)"; }
  void sum(float* data, std::size_t n, dist::WirePrecision) override {
    sent.emplace_back(data, data + n);
    if (other_sends_zeros) return;
    EXPECT_FALSE(other.empty()) << "a sum the other rank does not make";
    if (other.empty()) return;
    EXPECT_EQ(other.front().size(), n) << "the ranks' buffers differ in size";
    for (std::size_t i = 0; i < n && i < other.front().size(); ++i) data[i] += other.front()[i];
    other.pop_front();
  }
  void sum(double*, std::size_t) override {}
  void sum(std::int64_t*, std::size_t) override {}
  void start_sum(float* data, std::size_t n, dist::WirePrecision wire) override { sum(data, n, wire); }
  void wait_sums() override {}
  void broadcast(void*, std::size_t, int) override {}
  std::vector<std::string> gather_all(const std::string& mine) override { return {mine, mine}; }
  [[noreturn]] void abort(int) override { std::abort(); }
};

}  // namespace attn::testing
