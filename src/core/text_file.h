#pragma once
// Reading UTF-8 text files line by line, with errors that name the file and line.
#include <filesystem>
#include <istream>
#include <string>
#include <vector>

namespace attn {

// std::getline without the line ending: a final "\r" (a CRLF file's) is dropped too. The one
// line reader of text that people write (files, stdin, key files).
bool read_line(std::istream& in, std::string& line);

// Reads every line of a UTF-8 text file (without the line ending; a final "\r" is dropped too).
// Throws Error("path:line: ...") on invalid UTF-8, "path: ..." if the file cannot be read.
std::vector<std::string> read_text_lines(const std::filesystem::path& path);

// A whole file's bytes, as they are. Throws Error("path: cannot open: ...") or ("path: read error").
std::string read_file_bytes(const std::filesystem::path& path);

}  // namespace attn
