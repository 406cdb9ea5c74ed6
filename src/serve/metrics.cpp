#include "serve/metrics.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace attn::serve {
namespace {

std::string number(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

// Label values escape backslash, double quote and newline (the exposition format's rules).
std::string label(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  const auto it = std::lower_bound(bounds_.begin(), bounds_.end(), value);  // first bound >= value
  ++counts_[static_cast<std::size_t>(it - bounds_.begin())];
  sum_ += value;
  ++count_;
}

std::string Histogram::text(const std::string& name) const {
  std::ostringstream out;
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    out << name << "_bucket{le=\"" << number(bounds_[i]) << "\"} " << cumulative << "\n";
  }
  out << name << "_bucket{le=\"+Inf\"} " << count_ << "\n";
  out << name << "_sum " << number(sum_) << "\n" << name << "_count " << count_ << "\n";
  return out.str();
}

Metrics::Metrics()
    : latency_({0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}),
      batch_sentences_({1, 2, 4, 8, 16, 32, 64, 128, 256}) {}

void Metrics::request(const std::string& path, int status, double seconds) {
  std::lock_guard lock(mutex_);
  ++requests_[{path, status}];
  latency_.observe(seconds);
}

const char* batch_start_name(BatchStart start) {
  switch (start) {
    case BatchStart::full:
      return "full";
    case BatchStart::timer:
      return "timer";
    case BatchStart::shutdown:
      return "shutdown";
  }
  return "?";
}

void Metrics::batch(const std::string& model, BatchStart start, int sentences, std::int64_t source_tokens,
                    std::int64_t target_tokens, double seconds) {
  std::lock_guard lock(mutex_);
  ++batches_[{model, start}];
  auto& t = translated_[model];
  t[0] += static_cast<std::uint64_t>(sentences);
  t[1] += static_cast<std::uint64_t>(source_tokens);
  t[2] += static_cast<std::uint64_t>(target_tokens);
  busy_seconds_[model] += seconds;
  batch_sentences_.observe(sentences);
}

std::string Metrics::text(int queued_sentences, int in_flight_requests) const {
  std::lock_guard lock(mutex_);
  std::ostringstream out;
  out << "# HELP attn_http_requests_total HTTP requests answered, by path and status.\n"
         "# TYPE attn_http_requests_total counter\n";
  for (const auto& [key, n] : requests_)
    out << "attn_http_requests_total{path=\"" << label(key.first) << "\",status=\"" << key.second << "\"} " << n
        << "\n";
  out << "# HELP attn_http_request_duration_seconds Time from a request's arrival to its answer.\n"
         "# TYPE attn_http_request_duration_seconds histogram\n"
      << latency_.text("attn_http_request_duration_seconds");
  const char* names[3] = {"sentences", "source_tokens", "target_tokens"};
  const char* help[3] = {"Sentences translated.", "Source tokens translated (EOS included).",
                         "Target tokens produced (EOS included)."};
  for (int k = 0; k < 3; ++k) {
    out << "# HELP attn_translated_" << names[k] << "_total " << help[k] << "\n# TYPE attn_translated_" << names[k]
        << "_total counter\n";
    for (const auto& [model, t] : translated_)
      out << "attn_translated_" << names[k] << "_total{model=\"" << label(model) << "\"} " << t[k] << "\n";
  }
  out << "# HELP attn_translate_seconds_total Seconds the worker spent translating.\n"
         "# TYPE attn_translate_seconds_total counter\n";
  for (const auto& [model, s] : busy_seconds_)
    out << "attn_translate_seconds_total{model=\"" << label(model) << "\"} " << number(s) << "\n";
  out << "# HELP attn_batches_total Batches translated, by model and why each started (full, timer: its oldest "
         "sentence waited --batch-wait-ms, shutdown: a shutdown ended the wait).\n"
         "# TYPE attn_batches_total counter\n";
  for (const auto& [key, n] : batches_)
    out << "attn_batches_total{model=\"" << label(key.first) << "\",start=\"" << batch_start_name(key.second) << "\"} "
        << n << "\n";
  out << "# HELP attn_batch_sentences Sentences per batch.\n# TYPE attn_batch_sentences histogram\n"
      << batch_sentences_.text("attn_batch_sentences");
  out << "# HELP attn_queued_sentences Sentences waiting to be translated.\n# TYPE attn_queued_sentences gauge\n"
      << "attn_queued_sentences " << queued_sentences << "\n";
  out << "# HELP attn_http_requests_in_flight Requests being answered (this scrape not counted).\n# TYPE "
         "attn_http_requests_in_flight gauge\n"
      << "attn_http_requests_in_flight " << in_flight_requests << "\n";
  return out.str();
}

}  // namespace attn::serve
