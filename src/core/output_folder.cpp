#include "core/output_folder.h"

#include <unistd.h>

#include <system_error>

#include "core/error.h"

namespace attn {

void make_output_folder(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw_in(dir.string(), "cannot create the output folder: " + ec.message());
  if (!std::filesystem::is_directory(dir)) throw_in(dir.string(), "is not a folder");
  if (::access(dir.c_str(), W_OK | X_OK) != 0) throw_in(dir.string(), "the output folder is not writable");
}

}  // namespace attn
