// Load on `attn serve` over loopback, against offline `attn translate` on the same sentences.
//   serve_load --attn build/src/attn --model en-es=runs/en-es/model --input corpus/test.kjv
//              [--sentences 512] [--clients 64] [--max-seconds 300] [--beam 4] [--serve-arg OPTION ...]
// What it does and prints is kAbout below (serve_load --help prints it).
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_cli.h"

#define ATTN_BINARY attn_binary
static const char* attn_binary = "attn";
#include "serve/server_process.h"

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

const char* const kAbout =
    R"(serve_load: load on `attn serve` over loopback, against offline `attn translate` on the same sentences.
The clients send, in turn, single sentences and small batches (2-4 sentences) of the input to
POST /v1/translate, each client one request at a time. Prints one line per figure: requests,
failures, translations that differ from offline ones, sentences/s, target tokens/s, latency
percentiles, and the ratio of the served throughput to the offline throughput.
Example: serve_load --attn build/src/attn --model en-es=runs/en-es/model --input corpus/test.kjv)";

struct Args {
  std::string attn = "build/src/attn", model, input;
  int sentences = 512, clients = 64, beam = 4;
  double max_seconds = 300;
  std::vector<std::string> serve_args;  // more options for attn serve (--serve-arg X, repeated)
};

std::vector<std::string> read_lines(const std::string& path, int limit) {
  std::ifstream in(path);
  if (!in) throw attn::Error("cannot open " + path);
  std::vector<std::string> lines;
  for (std::string line; static_cast<int>(lines.size()) < limit && std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

int run(const Args& a) {
  attn_binary = a.attn.c_str();
  const std::string model_dir = a.model.substr(a.model.find('=') + 1);
  const auto lines = read_lines(a.input, a.sentences);

  // Offline: attn translate on the same sentences, its own throughput line (translation time,
  // model loading excluded).
  const std::string tmp = "/tmp/serve_load_" + std::to_string(getpid());
  {
    std::ofstream out(tmp + ".in");
    for (const auto& l : lines) out << l << "\n";
  }
  const std::string command = a.attn + " translate -m " + model_dir + " -i " + tmp + ".in -o " + tmp + ".out --beam " +
                              std::to_string(a.beam) + " 2>" + tmp + ".err";
  if (std::system(command.c_str()) != 0) {
    std::cerr << "serve_load: " << command << " failed\n";
    return 1;
  }
  double offline_sentences_per_s = 0, offline_tokens_per_s = 0;
  {
    std::ifstream err(tmp + ".err");
    std::stringstream text;
    text << err.rdbuf();
    const std::string s = text.str();
    const auto colon = s.rfind(": ");
    if (colon == std::string::npos || std::sscanf(s.c_str() + colon + 2, "%lf sentences/s, %lf target tokens/s",
                                                  &offline_sentences_per_s, &offline_tokens_per_s) != 2) {
      std::cerr << "serve_load: cannot read attn translate's throughput from: " << s << "\n";
      return 1;
    }
  }
  std::vector<std::string> offline;
  {
    std::ifstream out(tmp + ".out");
    for (std::string l; std::getline(out, l);) offline.push_back(l);
  }
  std::remove((tmp + ".in").c_str());
  std::remove((tmp + ".out").c_str());
  std::remove((tmp + ".err").c_str());

  // Requests: 1, 2, 1, 3, 1, 4 sentences, ... over the input.
  std::vector<std::pair<std::size_t, std::size_t>> requests;  // [first, last)
  const int sizes[] = {1, 2, 1, 3, 1, 4};
  for (std::size_t i = 0, k = 0; i < lines.size(); ++k) {
    const std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(sizes[k % 6]), lines.size() - i);
    requests.push_back({i, i + n});
    i += n;
  }

  std::vector<std::string> serve_args{"--model", a.model};
  serve_args.insert(serve_args.end(), a.serve_args.begin(), a.serve_args.end());
  attn::testing::ServerProcess server(serve_args);
  std::atomic<std::size_t> next{0};
  std::atomic<long> failed{0}, differ{0}, target_tokens{0}, sentences_done{0};
  std::mutex mutex;
  std::vector<double> latencies;
  const auto t0 = Clock::now();
  const auto give_up = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(a.max_seconds));
  std::vector<std::thread> clients;
  for (int c = 0; c < a.clients; ++c)
    clients.emplace_back([&] {
      httplib::Client client("127.0.0.1", server.port());
      client.set_read_timeout(600, 0);
      client.set_keep_alive(true);
      for (std::size_t r; (r = next++) < requests.size() && Clock::now() < give_up;) {
        const auto [first, last] = requests[r];
        const json body{{"q", std::vector<std::string>(lines.begin() + static_cast<std::ptrdiff_t>(first),
                                                       lines.begin() + static_cast<std::ptrdiff_t>(last))},
                        {"beam", a.beam}};
        const auto start = Clock::now();
        const auto res = client.Post("/v1/translate", body.dump(), "application/json");
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        if (!res || res->status != 200) {
          ++failed;
          continue;
        }
        const json reply = json::parse(res->body, nullptr, false);
        if (!reply.is_object() || reply["translations"].size() != last - first) {
          ++failed;
          continue;
        }
        for (std::size_t i = first; i < last; ++i) {
          const json& t = reply["translations"][i - first];
          target_tokens += t["target_tokens"].get<long>();
          differ += t["text"].get<std::string>() != offline[i];
        }
        sentences_done += static_cast<long>(last - first);
        std::lock_guard lock(mutex);
        latencies.push_back(seconds);
      }
    });
  for (auto& t : clients) t.join();
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  std::string metrics;
  {
    httplib::Client client("127.0.0.1", server.port());
    if (auto res = client.Get("/metrics")) metrics = res->body;
  }
  const auto metric = [&](const std::string& name) {
    const auto at = metrics.find("\n" + name + " ");
    return at == std::string::npos ? 0.0 : std::stod(metrics.substr(at + name.size() + 2));
  };
  const double batches = metric("attn_batch_sentences_count");
  const double busy = metric("attn_translate_seconds_total{model=\"" + a.model.substr(0, a.model.find('=')) + "\"}");
  const int exit_code = server.stop();

  const double sentences_per_s = static_cast<double>(sentences_done) / wall;
  const double tokens_per_s = static_cast<double>(target_tokens) / wall;
  const long lost = static_cast<long>(requests.size()) - static_cast<long>(latencies.size()) - failed;
  std::printf("serve_load: %d clients, %zu requests of 1-4 sentences (%zu sentences), beam %d\n", a.clients,
              requests.size(), lines.size(), a.beam);
  std::printf("requests answered              %zu\n", latencies.size());
  std::printf("requests failed                %ld\n", failed.load());
  std::printf("requests lost (not sent: time) %ld\n", lost);
  std::printf("translations unlike offline    %ld\n", differ.load());
  std::printf("served sentences/s             %.1f\n", sentences_per_s);
  std::printf("served target tokens/s         %.0f\n", tokens_per_s);
  std::printf("latency p50 / p95 / p99 (s)    %.3f / %.3f / %.3f\n", percentile(latencies, 0.5),
              percentile(latencies, 0.95), percentile(latencies, 0.99));
  std::printf("batches, mean sentences a batch %.0f, %.1f\n", batches,
              batches > 0 ? metric("attn_batch_sentences_sum") / batches : 0.0);
  std::printf("worker busy translating         %.1f s of %.1f s\n", busy, wall);
  std::printf("offline sentences/s            %.1f\n", offline_sentences_per_s);
  std::printf("offline target tokens/s        %.0f\n", offline_tokens_per_s);
  std::printf("served / offline (tokens/s)    %.2f\n", tokens_per_s / offline_tokens_per_s);
  std::printf("server exit status (SIGTERM)   %d\n", exit_code);
  return failed == 0 && lost == 0 && exit_code == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{kAbout, "serve_load"};
  Args a;
  app.add_option("--attn", a.attn, "the attn binary")->capture_default_str();
  app.add_option("--model", a.model, "the model to serve, SRC-TGT=DIR")
      ->required()
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            return text.find('=') == std::string::npos ? "expected SRC-TGT=DIR, got '" + text + "'" : "";
          },
          "SRC-TGT=DIR"));
  app.add_option("--input", a.input, "the sentences, one a line (empty lines skipped)")->required();
  app.add_option("--sentences", a.sentences, "sentences of the input to send")
      ->check(attn::bench::at_least(1))
      ->capture_default_str();
  app.add_option("--clients", a.clients, "clients, each one request at a time")
      ->check(attn::bench::at_least(1))
      ->capture_default_str();
  app.add_option("--max-seconds", a.max_seconds, "no request is sent after this many seconds")
      ->check(attn::bench::at_least(0))
      ->capture_default_str();
  app.add_option("--beam", a.beam, "the beam size, offline and served")
      ->check(attn::bench::at_least(1))
      ->capture_default_str();
  app.add_option("--serve-arg", a.serve_args, "one more argument for attn serve (repeat it for more)")
      ->expected(1)
      ->take_all()
      ->allow_extra_args(false);
  return attn::bench::run_main(app, argc, argv, [&] { return run(a); });
}
