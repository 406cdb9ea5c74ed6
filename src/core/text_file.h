#pragma once
// Reading UTF-8 text files line by line, with errors that name the file and line.
#include <filesystem>
#include <string>
#include <vector>

namespace attn {

// Reads every line of a UTF-8 text file (without the line ending; a final "\r" is dropped too).
// Throws Error("path:line: ...") on invalid UTF-8, "path: ..." if the file cannot be read.
std::vector<std::string> read_text_lines(const std::filesystem::path& path);

}  // namespace attn
