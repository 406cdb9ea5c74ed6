#pragma once
// The service's counters, exported at GET /metrics in Prometheus' text format (version 0.0.4):
// requests by path and status, sentences and tokens translated, batches and their sizes, request
// latency, and the queue. Thread-safe.
#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace attn::serve {

class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void observe(double value);
  // "name_bucket{le=...} n" lines (cumulative), then name_sum and name_count.
  std::string text(const std::string& name) const;

 private:
  std::vector<double> bounds_;
  std::vector<std::uint64_t> counts_;  // per bucket, not cumulative; last = +Inf
  double sum_ = 0;
  std::uint64_t count_ = 0;
};

// Why a batch started: it was full (--batch-tokens or --max-batch-sentences), its oldest sentence had
// waited --batch-wait-ms, or a shutdown ended the wait.
enum class BatchStart { full, timer, shutdown };
const char* batch_start_name(BatchStart start);

class Metrics {
 public:
  Metrics();
  void request(const std::string& path, int status, double seconds);
  void batch(const std::string& model, BatchStart start, int sentences, std::int64_t source_tokens,
             std::int64_t target_tokens, double seconds);
  std::string text(int queued_sentences, int in_flight_requests) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, std::uint64_t> requests_;        // (path, status)
  std::map<std::string, std::array<std::uint64_t, 3>> translated_;       // model: sentences, source, target tokens
  std::map<std::string, double> busy_seconds_;                           // model: seconds translating
  std::map<std::pair<std::string, BatchStart>, std::uint64_t> batches_;  // (model, why it started)
  Histogram latency_, batch_sentences_;
};

}  // namespace attn::serve
