#include "core/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "core/error.h"

namespace attn {
namespace {

void fsync_path(const std::filesystem::path& path, int flags) {
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) throw_in(path.string(), std::string("cannot open for fsync: ") + std::strerror(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) throw_in(path.string(), std::string("fsync failed: ") + std::strerror(err));
}

std::filesystem::path temporary_name(const std::filesystem::path& destination) {
  std::random_device rd;
  std::string name = ".";
  name += destination.filename().string();
  name += ".tmp.";
  name += std::to_string(::getpid());
  name += ".";
  name += std::to_string(rd());
  return destination.parent_path() / name;
}

}  // namespace

AtomicFileWriter::AtomicFileWriter(std::filesystem::path destination)
    : destination_(std::move(destination)), temporary_(temporary_name(destination_)) {
  if (!destination_.parent_path().empty()) std::filesystem::create_directories(destination_.parent_path());
  out_.open(temporary_, std::ios::binary | std::ios::trunc);
  if (!out_) throw_in(temporary_.string(), std::string("cannot create: ") + std::strerror(errno));
}

AtomicFileWriter::~AtomicFileWriter() {
  if (!committed_) {
    out_.close();
    std::error_code ec;
    std::filesystem::remove(temporary_, ec);
  }
}

void AtomicFileWriter::commit() {
  out_.flush();
  if (!out_) throw_in(temporary_.string(), "write failed (disk full?)");
  out_.close();
  fsync_path(temporary_, O_RDONLY);
  std::error_code ec;
  std::filesystem::rename(temporary_, destination_, ec);
  if (ec) throw_in(destination_.string(), "cannot rename into place: " + ec.message());
  committed_ = true;
  sync_directory(destination_.parent_path().empty() ? "." : destination_.parent_path());
}

void write_file_atomic(const std::filesystem::path& destination, std::string_view bytes) {
  AtomicFileWriter w(destination);
  w.write(bytes);
  w.commit();
}

void sync_directory(const std::filesystem::path& dir) { fsync_path(dir, O_RDONLY | O_DIRECTORY); }

}  // namespace attn
