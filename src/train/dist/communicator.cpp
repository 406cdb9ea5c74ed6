#include "train/dist/communicator.h"

#include <cstdlib>

namespace attn::dist {
namespace {

class SingleProcess final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string description() const override { return "single process"; }
  void sum(float*, std::size_t, WirePrecision) override {}
  void sum(double*, std::size_t) override {}
  void sum(std::int64_t*, std::size_t) override {}
  void start_sum(float*, std::size_t, WirePrecision) override {}
  void wait_sums() override {}
  void broadcast(void*, std::size_t, int) override {}
  std::vector<std::string> gather_all(const std::string& mine) override { return {mine}; }
  [[noreturn]] void abort(int code) override { std::exit(code); }
};

}  // namespace

const char* to_string(WirePrecision wire) { return wire == WirePrecision::bf16 ? "bf16" : "fp32"; }

std::unique_ptr<Communicator> single_process() { return std::make_unique<SingleProcess>(); }

void broadcast(Communicator& c, std::string& text, int root) {
  if (c.size() == 1) return;
  std::int64_t n = static_cast<std::int64_t>(text.size());
  c.broadcast(&n, sizeof n, root);
  text.resize(static_cast<std::size_t>(n));
  if (n > 0) c.broadcast(text.data(), text.size(), root);
}

std::string collect_errors(Communicator& c, const std::string& mine) {
  const std::vector<std::string> all = c.gather_all(mine);
  std::string text;
  for (std::size_t r = 0; r < all.size(); ++r)
    if (!all[r].empty()) text += (text.empty() ? "" : "; ") + ("rank " + std::to_string(r) + ": " + all[r]);
  return text;
}

}  // namespace attn::dist
