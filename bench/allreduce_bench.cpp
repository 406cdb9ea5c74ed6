// Benchmark: the gradient sum of distributed training (one MPI_Allreduce over the flat gradient
// buffer, as attn train does after each update), for the parameter counts of the presets.
//   mpirun -np 2 build/bench/allreduce_bench [--vocab-size 8000] [--repeats 20] [--wire fp32|bf16] [PRESET...]
// What it prints is kAbout below (allreduce_bench --help prints it).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_cli.h"
#include "model/parameter_layout.h"
#include "train/dist/communicator.h"

namespace {

const char* const kAbout = R"(allreduce_bench: the gradient sum of distributed training (one MPI_Allreduce over the flat
gradient buffer, as attn train does after each update), for the parameter counts of the presets.
Run it under MPI, e.g. mpirun -np 2 build/bench/allreduce_bench small base.
Prints per preset: parameters, bytes per step, median seconds per allreduce, and the bus
bandwidth 2(n-1)/n x bytes / time (the traffic each rank sends in a ring allreduce). --wire bf16:
the gradient sent in bfloat16 (attn train --allreduce-precision bf16; bytes counted as sent, 2 per
parameter, the conversions to and from bf16 inside the time).)";

int run(std::vector<std::string> presets, int vocab, int repeats, attn::dist::WirePrecision wire) {
  if (presets.empty()) presets = {"small", "base"};
  const auto ranks = attn::dist::world();
  const int n = ranks->size();
  if (ranks->rank() == 0)
    std::printf("%d rank(s), %s, %s on the wire\n%-6s %12s %10s %12s %14s\n", n, ranks->description().c_str(),
                attn::dist::to_string(wire), "preset", "parameters", "MB/step", "allreduce s", "bus GB/s");
  for (const auto& name : presets) {
    attn::ModelConfig c = attn::ModelConfig::preset(name);
    c.vocab_size = vocab;
    const auto count = static_cast<std::size_t>(attn::ParameterLayout(c).total());
    std::vector<float> g(count, 1.0f / static_cast<float>(ranks->rank() + 1));
    std::vector<double> times;
    for (int r = 0; r < repeats + 2; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      ranks->sum(g.data(), count, wire);
      double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      ranks->sum(&t, 1);  // the slowest rank's view is what the step waits for; the mean is close
      if (r >= 2) times.push_back(t / n);
    }
    std::sort(times.begin(), times.end());
    const double median = times[times.size() / 2];
    const double bytes = static_cast<double>(count) * (wire == attn::dist::WirePrecision::bf16 ? 2 : sizeof(float));
    if (ranks->rank() == 0)
      std::printf("%-6s %12zu %10.1f %12.4f %14.2f\n", name.c_str(), count, bytes / 1e6, median,
                  n > 1 ? 2.0 * (n - 1) / n * bytes / median / 1e9 : 0.0);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{kAbout, "allreduce_bench"};
  int vocab = 8000, repeats = 20;
  std::vector<std::string> presets;
  app.add_option("--vocab-size", vocab, "the vocabulary of the models")
      ->check(attn::bench::at_least(1))
      ->capture_default_str();
  app.add_option("--repeats", repeats, "timed allreduces per preset (after 2 untimed)")
      ->check(attn::bench::at_least(1))
      ->capture_default_str();
  std::string wire = "fp32";
  app.add_option("--wire", wire, "the gradient on the wire: fp32 or bf16")
      ->check(CLI::IsMember({"fp32", "bf16"}))
      ->capture_default_str();
  app.add_option("PRESET", presets, "model presets (" + attn::bench::preset_list() + "); default: small base")
      ->check(attn::bench::preset_name());
  return attn::bench::run_main(app, argc, argv, [&] {
    return run(presets, vocab, repeats,
               wire == "bf16" ? attn::dist::WirePrecision::bf16 : attn::dist::WirePrecision::fp32);
  });
}
