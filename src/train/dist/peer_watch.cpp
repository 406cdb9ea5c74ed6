#include "train/dist/peer_watch.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <sstream>

#include "train/dist/host.h"

namespace attn::dist {
namespace {

using Clock = std::chrono::steady_clock;

// One heartbeat (or a goodbye): who sends it, for which job.
struct Datagram {
  char magic[8];
  std::uint64_t job;
  std::uint32_t rank;
  std::uint32_t kind;  // kAlive, or kEnded: the sender's watch is gone (its rank has finished)
};
constexpr std::uint32_t kAlive = 0, kEnded = 1;
constexpr char kMagic[8] = {'a', 't', 't', 'n', 'p', 'e', 'e', 'r'};

// The host name and the network namespace: two ranks with the same reach each other on loopback.
std::string network_identity() {
  struct stat ns {};
  const auto inode = stat("/proc/self/ns/net", &ns) == 0 ? static_cast<unsigned long long>(ns.st_ino) : 0ULL;
  return host_name() + "/" + std::to_string(inode);
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, separator);)
    if (!part.empty()) out.push_back(part);
  return out;
}

std::string join(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : separator) + p;
  return out;
}

std::string seconds_text(double s) {
  char text[32];
  std::snprintf(text, sizeof text, s < 10 ? "%.1f" : "%.0f", s);
  return text;
}

}  // namespace

PeerWatch::PeerWatch(Communicator& ranks, double timeout_seconds, Lost lost, Warn warn)
    : rank_(ranks.rank()), timeout_(timeout_seconds), lost_(std::move(lost)), warn_(std::move(warn)) {
  if (ranks.size() == 1) return;
  // The addresses are exchanged even where this rank's timeout is 0: a collective every rank calls,
  // whatever its options (ranks whose options differ are stopped later, naming the difference).
  // Heartbeats ten times a timeout, at most once a second.
  interval_ = std::clamp(timeout_ / 10, 0.05, 1.0);
  std::string error;
  socket_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_in any{};
  any.sin_family = AF_INET;
  any.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t length = sizeof any;
  if (socket_ < 0 || ::bind(socket_, reinterpret_cast<sockaddr*>(&any), sizeof any) != 0 ||
      ::getsockname(socket_, reinterpret_cast<sockaddr*>(&any), &length) != 0)
    error = std::string("cannot open a UDP socket for the ranks' heartbeats: ") + std::strerror(errno);
  const std::string identity = network_identity();
  const std::vector<std::string> mine = ipv4_addresses();
  // port|identity|address,address...  (every rank learns every rank's, even after an error here,
  // so that the collective matches on every rank)
  const std::string card =
      error.empty() ? std::to_string(ntohs(any.sin_port)) + "|" + identity + "|" + join(mine, ",") : "";
  const std::vector<std::string> cards = ranks.gather_all(card);
  std::string failed;
  for (std::size_t r = 0; r < cards.size(); ++r)
    if (cards[r].empty()) failed += (failed.empty() ? "" : ", ") + std::to_string(r);
  if (!failed.empty()) {
    if (socket_ >= 0) ::close(socket_);
    throw Error(error.empty() ? "rank(s) " + failed + " could not open a UDP socket for the ranks' heartbeats" : error);
  }
  std::uint64_t job = 1469598103934665603ULL;  // FNV-1a of every card: the same on every rank
  for (const auto& c : cards)
    for (const unsigned char ch : c + "\n") job = (job ^ ch) * 1099511628211ULL;
  job_ = job;
  peers_.resize(cards.size());
  for (std::size_t r = 0; r < cards.size(); ++r) {
    const std::vector<std::string> fields = split(cards[r] + "|", '|');
    const std::string port = fields.at(0);
    const std::vector<std::string> addresses = fields.size() > 2 ? split(fields[2], ',') : std::vector<std::string>{};
    peers_[r].host = host_description(fields.at(1).substr(0, fields.at(1).rfind('/')), addresses);
    for (const auto& a : addresses) peers_[r].addresses.push_back(a + ":" + port);
    if (fields.at(1) == identity) peers_[r].addresses.push_back("127.0.0.1:" + port);
  }
  if (timeout_ <= 0) {  // not watched: no heartbeats, no thread
    ::close(socket_);
    socket_ = -1;
    return;
  }
  started_ = Clock::now();
  heard_.assign(cards.size(), Clock::time_point{});
  unwatched_.assign(cards.size(), false);
  ended_.assign(cards.size(), false);
  thread_ = std::thread([this] { loop(); });
}

PeerWatch::~PeerWatch() {
  stop_ = true;
  if (thread_.joinable()) {
    thread_.join();
    // This rank has finished (or is leaving with an error it reports itself): the others stop
    // watching it, since one may still work alone for a while (rank 0 writing the final model).
    // Three times, 10 ms apart: a datagram may be lost.
    for (int i = 0; i < 3; ++i) {
      if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      send_all(kEnded);
    }
  }
  if (socket_ >= 0) ::close(socket_);
}

std::string PeerWatch::describe(int rank) const {
  return "rank " + std::to_string(rank) +
         (rank >= 0 && rank < static_cast<int>(peers_.size()) ? " (" + peers_[static_cast<std::size_t>(rank)].host + ")"
                                                              : "");
}

void PeerWatch::send_all(std::uint32_t kind) {
  Datagram d{};
  std::memcpy(d.magic, kMagic, sizeof kMagic);
  d.job = job_;
  d.rank = static_cast<std::uint32_t>(rank_);
  d.kind = kind;
  for (std::size_t r = 0; r < peers_.size(); ++r) {
    if (static_cast<int>(r) == rank_) continue;
    for (const auto& where : peers_[r].addresses) {
      const auto colon = where.rfind(':');
      sockaddr_in to{};
      to.sin_family = AF_INET;
      to.sin_port = htons(static_cast<std::uint16_t>(std::stoi(where.substr(colon + 1))));
      if (inet_pton(AF_INET, where.substr(0, colon).c_str(), &to.sin_addr) != 1) continue;
      // Unreachable (a link down) or a full buffer: this heartbeat is lost, as it would be on the wire.
      (void)::sendto(socket_, &d, sizeof d, MSG_DONTWAIT | MSG_NOSIGNAL, reinterpret_cast<sockaddr*>(&to), sizeof to);
    }
  }
}

void PeerWatch::receive_until(Clock::time_point until) {
  for (;;) {
    Datagram d{};
    const ssize_t n = ::recv(socket_, &d, sizeof d, MSG_DONTWAIT);
    if (n == static_cast<ssize_t>(sizeof d)) {
      if (std::memcmp(d.magic, kMagic, sizeof kMagic) == 0 && d.job == job_ && d.rank < heard_.size() &&
          static_cast<int>(d.rank) != rank_) {
        std::lock_guard<std::mutex> lock(mutex_);
        heard_[d.rank] = Clock::now();
        if (d.kind == kEnded) ended_[d.rank] = true;
      }
      continue;
    }
    if (n >= 0 || errno == EINTR) continue;  // a datagram of another size: not ours
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    if (left <= 0 || stop_) return;
    pollfd p{socket_, POLLIN, 0};
    ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 100)));  // wakes at least every 0.1 s for stop_
  }
}

void PeerWatch::loop() {
  const auto interval = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(interval_));
  auto next = Clock::now();
  while (!stop_) {
    send_all(kAlive);
    next += interval;
    if (next < Clock::now()) next = Clock::now();  // this thread was held up: no burst to catch up
    receive_until(next);
    if (stop_) return;
    const auto now = Clock::now();
    std::string message, never;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const double since_start = std::chrono::duration<double>(now - started_).count();
      if (!settled_ && since_start >= timeout_) {
        settled_ = true;
        for (std::size_t r = 0; r < heard_.size(); ++r) {
          unwatched_[r] = static_cast<int>(r) != rank_ && heard_[r] == Clock::time_point{};
          if (unwatched_[r]) never += (never.empty() ? "" : ", ") + describe(static_cast<int>(r));
        }
      }
      for (std::size_t r = 0; r < heard_.size() && message.empty(); ++r) {
        if (static_cast<int>(r) == rank_ || unwatched_[r] || ended_[r] || heard_[r] == Clock::time_point{}) continue;
        const double silent = std::chrono::duration<double>(now - heard_[r]).count();
        if (silent > timeout_)
          message = describe(static_cast<int>(r)) + " has not been heard from for " + seconds_text(silent) +
                    " s (peer_timeout_seconds " + seconds_text(timeout_) +
                    "): its process stopped, its node went down or the network to it was cut";
      }
    }
    if (!never.empty() && warn_)
      warn_(never + ": no heartbeat within the first " + seconds_text(timeout_) +
            " s (UDP between the hosts blocked?): not watched; if its node goes down or its link is cut, this job "
            "waits until MPI gives up");
    if (!message.empty()) {
      lost_(message);
      return;
    }
  }
}

}  // namespace attn::dist
