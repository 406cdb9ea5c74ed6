#pragma once
// A folder that a command writes its files into, made ready before anything is written.
#include <filesystem>

namespace attn {

// Creates `dir` (and its parents) if missing. Throws Error naming it if it cannot be created, is
// not a folder, or cannot be written to, so that a command fails before doing its work.
void make_output_folder(const std::filesystem::path& dir);

}  // namespace attn
