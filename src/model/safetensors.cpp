#include "model/safetensors.h"

#include <bit>
#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/error.h"

namespace attn {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");

namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::int64_t element_count(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  return n;
}

}  // namespace

std::size_t dtype_bytes(const std::string& dtype) {
  if (dtype == "F32") return sizeof(float);
  if (dtype == "I8") return 1;
  throw Error("unsupported safetensors dtype '" + dtype + "' (attn reads F32 and I8)");
}

void write_safetensors(const std::filesystem::path& path, const std::vector<TensorToWrite>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header;
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::size_t offset = 0;
  for (const auto& t : tensors) {
    const std::size_t bytes = static_cast<std::size_t>(element_count(t.shape)) * dtype_bytes(t.dtype);
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // keeps the data 8-byte aligned
  const std::uint64_t length = text.size();
  AtomicFileWriter out(path);
  out.write(std::string_view(reinterpret_cast<const char*>(&length), sizeof length));
  out.write(text);
  for (const auto& t : tensors)
    out.write(std::string_view(reinterpret_cast<const char*>(t.data),
                               static_cast<std::size_t>(element_count(t.shape)) * dtype_bytes(t.dtype)));
  out.commit();
}

SafetensorsFile::SafetensorsFile(const std::filesystem::path& path) : SafetensorsFile(path, false) {}

namespace {

// An array of JSON integers (not floats such as 1e68 or 4.5).
bool integers(const nlohmann::json& v) {
  if (!v.is_array()) return false;
  for (const auto& x : v)
    if (!x.is_number_integer()) return false;
  return true;
}

}  // namespace

SafetensorsFile::SafetensorsFile(const std::filesystem::path& path, bool header_only) : path_(path.string()) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw_in(path_, "cannot open");
  const auto file_size = static_cast<std::uint64_t>(in.tellg());
  in.seekg(0);
  std::uint64_t length = 0;
  if (file_size < 8 || !in.read(reinterpret_cast<char*>(&length), 8))
    throw_in(path_, "not a safetensors file: shorter than its 8-byte header length");
  if (length > file_size - 8)
    throw_in(path_, "truncated: the header claims " + std::to_string(length) + " bytes but the file has " +
                        std::to_string(file_size - 8) + " after the length");
  std::string text(length, '\0');
  in.read(text.data(), static_cast<std::streamsize>(length));
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for a number like 1e999
    throw_in(path_, std::string("corrupt header (not JSON): ") + e.what());
  }
  if (!header.is_object()) throw_in(path_, "corrupt header: not a JSON object");
  const std::uint64_t data_size = file_size - 8 - length;
  std::size_t covered = 0;
  try {
    for (auto it = header.begin(); it != header.end(); ++it) {
      if (it.key() == "__metadata__") {
        for (auto m = it->begin(); m != it->end(); ++m) metadata_[m.key()] = m->get<std::string>();
        continue;
      }
      Entry e;
      e.dtype = it->at("dtype").get<std::string>();
      // Whole numbers only: casting 1e68 or 4.5 to an integer is undefined or wrong.
      const nlohmann::json& shape = it->at("shape");
      if (!integers(shape))
        throw_in(path_, "corrupt header: tensor '" + it.key() + "': shape must be whole numbers, got " + shape.dump());
      e.shape = shape.get<std::vector<std::int64_t>>();
      const nlohmann::json& range = it->at("data_offsets");
      if (!integers(range) || range.size() != 2 || !range[0].is_number_unsigned() || !range[1].is_number_unsigned())
        throw_in(path_, "corrupt header: tensor '" + it.key() +
                            "': data_offsets must be two whole numbers from 0, got " + range.dump());
      const std::uint64_t offsets[2] = {range[0].get<std::uint64_t>(), range[1].get<std::uint64_t>()};
      if (offsets[0] > offsets[1] || offsets[1] > data_size)
        throw_in(path_, "tensor '" + it.key() + "' lies outside the file's " + std::to_string(data_size) +
                            " data bytes (truncated file?)");
      e.begin = offsets[0];
      e.end = offsets[1];
      covered = std::max(covered, e.end);
      entries_[it.key()] = std::move(e);
    }
  } catch (const nlohmann::json::exception& e) {
    throw_in(path_, std::string("corrupt header: ") + e.what());
  }
  if (covered != data_size)
    throw_in(path_, "the data section has " + std::to_string(data_size) + " bytes but the tensors cover " +
                        std::to_string(covered));
  if (header_only) return;
  data_.resize(data_size);
  if (!in.read(data_.data(), static_cast<std::streamsize>(data_size))) throw_in(path_, "read error");
}

void SafetensorsFile::read(const std::string& name, const std::vector<std::int64_t>& shape, float* dst) const {
  read(name, "F32", shape, dst);
}

void SafetensorsFile::read(const std::string& name, const std::vector<std::int64_t>& shape, std::int8_t* dst) const {
  read(name, "I8", shape, dst);
}

const std::string& SafetensorsFile::dtype(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) throw_in(path_, "missing tensor '" + name + "'");
  return it->second.dtype;
}

void SafetensorsFile::read(const std::string& name, const std::string& dtype, const std::vector<std::int64_t>& shape,
                           void* dst) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) throw_in(path_, "missing tensor '" + name + "'");
  const Entry& e = it->second;
  if (e.dtype != dtype) throw_in(path_, "tensor '" + name + "' has dtype " + e.dtype + ", expected " + dtype);
  if (e.shape != shape)
    throw_in(path_,
             "tensor '" + name + "' has shape " + shape_text(e.shape) + " but the model expects " + shape_text(shape));
  const std::size_t bytes = static_cast<std::size_t>(element_count(shape)) * dtype_bytes(dtype);
  if (e.end - e.begin != bytes) throw_in(path_, "tensor '" + name + "' has a byte range that does not match its shape");
  ATTN_CHECK(e.end <= data_.size(), "safetensors file opened for its header only");
  // memcpy wants valid pointers even for no bytes; an empty tensor may come with an empty data section.
  if (bytes > 0) std::memcpy(dst, data_.data() + e.begin, bytes);
}

}  // namespace attn
