#pragma once
// The translated files of /translate_file, kept for /download_file/<name> as long as configured and
// only inside the service's folder. Names are made here (random, then the upload's own name made
// safe), so a request cannot name a path.
#include <chrono>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>

namespace attn::serve {

class FileStore {
 public:
  // `dir` empty: a fresh folder under the system's temporary folder, removed with the store.
  // Otherwise created if missing, and only files this store made are ever removed from it.
  FileStore(const std::filesystem::path& dir, double keep_seconds);
  ~FileStore();
  FileStore(const FileStore&) = delete;
  FileStore& operator=(const FileStore&) = delete;

  // Keeps `bytes` under a new name "<32 hex digits>.<original name made safe>" and returns it.
  std::string put(const std::string& bytes, const std::string& original_name);
  // The bytes of a kept file; nullopt for a name this store did not make or has removed (expired).
  std::optional<std::string> get(const std::string& name);
  const std::filesystem::path& dir() const { return dir_; }

  // The upload's name made safe: throws Error for a name with a path in it (/ \ ..) or none.
  static std::string safe_name(const std::string& original_name);

 private:
  void remove_expired();  // with mutex_ held

  std::filesystem::path dir_;
  bool owned_ = false;
  double keep_seconds_;
  std::mutex mutex_;
};

}  // namespace attn::serve
