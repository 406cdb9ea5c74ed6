#include "train/rank_agreement.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "core/error.h"
#include "core/sha256.h"

namespace attn {

namespace {

std::string file_sha256(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_in(path, "cannot open");
  Sha256 hash;
  std::vector<char> buffer(1 << 20);
  while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0)
    hash.update(buffer.data(), static_cast<std::size_t>(in.gcount()));
  if (in.bad()) throw_in(path, "read failed");
  return to_hex(hash.finish());
}

}  // namespace

nlohmann::json job_fingerprint(const TrainOptions& o) {
  nlohmann::json j = options_to_json(o);
  for (const char* key : {"train_source", "train_target", "valid_source", "valid_target", "vocabulary"}) {
    const std::string path = j.at(key);
    j.erase(key);
    if (!path.empty()) j[std::string("contents of ") + key + " (sha256)"] = file_sha256(path);
  }
  j.erase("run_dir");
  j.erase("threads");
  // The program itself: ranks running other builds would compute other bits (or other things).
  j["program (sha256)"] = file_sha256("/proc/self/exe");
  return j;
}

std::string fingerprint_differences(const std::vector<std::string>& all, const std::vector<std::string>& hosts) {
  auto rank = [&](std::size_t r) {
    return "rank " + std::to_string(r) + (r < hosts.size() && !hosts[r].empty() ? " (" + hosts[r] + ")" : "");
  };
  const nlohmann::json first = nlohmann::json::parse(all.at(0));
  std::string text;
  for (std::size_t r = 1; r < all.size(); ++r) {
    const nlohmann::json other = nlohmann::json::parse(all[r]);
    std::string diffs;
    nlohmann::json keys = first;
    keys.update(other);
    for (const auto& [key, unused] : keys.items()) {
      const std::string a = first.contains(key) ? first[key].dump() : "(absent)";
      const std::string b = other.contains(key) ? other[key].dump() : "(absent)";
      if (a != b)
        diffs +=
            (diffs.empty() ? "" : ", ") + key + " is " + b + " on rank " + std::to_string(r) + ", " + a + " on rank 0";
    }
    if (!diffs.empty()) text += (text.empty() ? "" : "; ") + (rank(r) + " differs from " + rank(0) + ": " + diffs);
  }
  return text;
}

int default_threads(dist::Communicator& ranks) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  std::string mask(CPU_SETSIZE, '0');
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) mask[static_cast<std::size_t>(c)] = '1';
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const std::string mine = std::string(host) + "\n" + mask;
  const auto all = ranks.gather_all(mine);
  int sharing = 0;
  for (const auto& other : all) {
    if (other.substr(0, other.find('\n')) != host) continue;
    const std::string other_mask = other.substr(other.find('\n') + 1);
    for (std::size_t c = 0; c < mask.size() && c < other_mask.size(); ++c)
      if (mask[c] == '1' && other_mask[c] == '1') {
        ++sharing;
        break;
      }
  }
  return std::max(1, CPU_COUNT(&set) / std::max(1, sharing));
}

}  // namespace attn
