#pragma once
// The safetensors format (https://huggingface.co/docs/safetensors): an 8-byte little-endian
// header length, a JSON header naming each tensor's dtype, shape and byte range, then the raw
// little-endian data. PyTorch users load it with safetensors.torch.load_file.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace attn {

struct TensorToWrite {
  std::string name;
  std::vector<std::int64_t> shape;
  const void* data = nullptr;  // host memory, shape's product elements of dtype
  std::string dtype = "F32";   // "F32" (float) or "I8" (std::int8_t)
};

// Bytes per element of a dtype this program reads or writes (F32, I8); throws on any other.
std::size_t dtype_bytes(const std::string& dtype);

// Writes atomically (temporary file, fsync, rename).
void write_safetensors(const std::filesystem::path& path, const std::vector<TensorToWrite>& tensors,
                       const std::map<std::string, std::string>& metadata);

class SafetensorsFile {
 public:
  // Reads and validates the whole file; throws Error naming the file and the problem.
  explicit SafetensorsFile(const std::filesystem::path& path);
  // With header_only, only the header is read and checked (entries and metadata; no data, and
  // read() then fails): enough to tell what a file holds.
  SafetensorsFile(const std::filesystem::path& path, bool header_only);

  struct Entry {
    std::string dtype;
    std::vector<std::int64_t> shape;
    std::size_t begin = 0, end = 0;  // byte range in the data section
  };

  const std::map<std::string, Entry>& entries() const { return entries_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  bool contains(const std::string& name) const { return entries_.count(name) != 0; }
  // The raw data section (for checksums).
  std::string_view data() const { return {data_.data(), data_.size()}; }
  const std::string& path() const { return path_; }
  // Copies an F32 tensor into dst after checking its shape; throws Error if missing or different.
  void read(const std::string& name, const std::vector<std::int64_t>& shape, float* dst) const;
  // The same for an I8 tensor.
  void read(const std::string& name, const std::vector<std::int64_t>& shape, std::int8_t* dst) const;
  // The dtype of a tensor; throws Error if missing.
  const std::string& dtype(const std::string& name) const;

 private:
  void read(const std::string& name, const std::string& dtype, const std::vector<std::int64_t>& shape, void* dst) const;
  std::string path_;
  std::map<std::string, Entry> entries_;
  std::map<std::string, std::string> metadata_;
  std::vector<char> data_;
};

}  // namespace attn
