#pragma once
// `attn serve` started as a user would start it, on a free port of 127.0.0.1, for tests that talk
// HTTP to it: the port is read from its first line of output. Killed if a test forgets it.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace attn::testing {

class ServerProcess {
 public:
  // arguments: after "attn serve --port 0".
  explicit ServerProcess(const std::vector<std::string>& arguments) {
    int out[2];
    if (pipe(out) != 0) throw std::runtime_error("pipe");
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], 1);
      close(out[0]);
      close(out[1]);
      std::vector<std::string> args{ATTN_BINARY, "serve", "--port", "0"};
      args.insert(args.end(), arguments.begin(), arguments.end());
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(out[1]);
    output_ = out[0];
    std::string line;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (line.find('\n') == std::string::npos) {
      pollfd p{output_, POLLIN, 0};
      if (std::chrono::steady_clock::now() > give_up || poll(&p, 1, 1000) < 0) break;
      char c;
      if (p.revents & (POLLIN | POLLHUP)) {
        if (read(output_, &c, 1) != 1) break;
        line += c;
      }
    }
    const auto colon = line.rfind(':');
    if (line.rfind("listening on http://127.0.0.1:", 0) != 0 || colon == std::string::npos) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
      throw std::runtime_error("attn serve did not start (first line: '" + line + "')");
    }
    port_ = std::stoi(line.substr(colon + 1));
  }
  ~ServerProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (output_ >= 0) close(output_);
  }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  // Sends `signal` without waiting for anything.
  void signal(int signal) const { kill(pid_, signal); }

  // Sends `signal` and waits (at most `seconds`) for the exit; its exit status, or -1 if it had
  // to be killed or died of a signal.
  int stop(int signal = SIGTERM, int seconds = 60) {
    kill(pid_, signal);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    int status = 0;
    while (waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > give_up) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        pid_ = -1;
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  pid_t pid_ = -1;
  int output_ = -1;
  int port_ = 0;
};

// A raw TCP connection to 127.0.0.1:port, for what no well-behaved client sends.
class RawConnection {
 public:
  explicit RawConnection(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~RawConnection() { close(fd_); }
  bool connected() const { return connected_; }
  bool send(const std::string& bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
  }
  // What arrives within `seconds` (until the peer closes).
  std::string receive(int seconds) {
    std::string got;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < give_up) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      char buf[4096];
      const ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) break;
      got.append(buf, static_cast<std::size_t>(n));
    }
    return got;
  }
  // Whether the peer has neither answered nor closed the connection (yet).
  bool untouched() {
    pollfd p{fd_, POLLIN, 0};
    return poll(&p, 1, 0) == 0;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

}  // namespace attn::testing
