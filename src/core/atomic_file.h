#pragma once
// Files that are either completely written or not there at all: data goes to a temporary file in
// the same folder, is flushed to disk (fsync), and only then renamed over the destination.
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace attn {

class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::filesystem::path destination);
  ~AtomicFileWriter();  // removes the temporary file unless commit() succeeded
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  std::ostream& stream() { return out_; }
  void write(std::string_view bytes) { out_.write(bytes.data(), static_cast<std::streamsize>(bytes.size())); }
  // Flushes, fsyncs and renames over the destination; throws Error on any failure.
  void commit();

 private:
  std::filesystem::path destination_;
  std::filesystem::path temporary_;
  std::ofstream out_;
  bool committed_ = false;
};

void write_file_atomic(const std::filesystem::path& destination, std::string_view bytes);

// fsyncs a folder so that a rename inside it survives a power cut.
void sync_directory(const std::filesystem::path& dir);

}  // namespace attn
