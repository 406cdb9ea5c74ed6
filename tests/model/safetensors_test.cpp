// safetensors files: a file written by hand byte for byte, the model's round trip, and the
// errors for truncated, corrupt and mismatched files.
#include "model/safetensors.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/temp_dir.h"
#include "core/error.h"
#include "core/text_file.h"
#include "model/parameter_layout.h"
#include "model/transformer.h"

namespace attn {
namespace {

void write_bytes(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

std::string read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void expect_error(const std::function<void()>& f, const std::string& fragment) {
  try {
    f();
    ADD_FAILURE() << "expected an error containing: " << fragment;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(Safetensors, ReadsAFileWrittenByHand) {
  auto dir = testing::fresh_temp_dir("safetensors_hand");
  // The format by its specification: u64 little-endian header size, JSON header, raw data.
  const std::string header =
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1,1],"data_offsets":[8,12]}})";
  std::string bytes(8, '\0');
  const std::uint64_t n = header.size();
  std::memcpy(bytes.data(), &n, 8);
  bytes += header;
  const float values[3] = {1.5f, -2.0f, 3.25f};
  bytes.append(reinterpret_cast<const char*>(values), sizeof values);
  write_bytes(dir / "x.safetensors", bytes);
  SafetensorsFile f(dir / "x.safetensors");
  float a[2], b[1];
  f.read("a", {2}, a);
  f.read("b", {1, 1}, b);
  EXPECT_EQ(a[0], 1.5f);
  EXPECT_EQ(a[1], -2.0f);
  EXPECT_EQ(b[0], 3.25f);
  expect_error([&] { f.read("a", {1, 2}, a); }, "has shape [2] but the model expects [1, 2]");
  expect_error([&] { f.read("c", {1}, a); }, "missing tensor 'c'");
}

// Found by fuzzing (fuzz/safetensors_fuzz.cpp): a header number beyond double made nlohmann throw
// out_of_range, which escaped as an unexpected error without the file's name.
TEST(Safetensors, AHeaderNumberTooLargeForJsonIsACorruptHeader) {
  auto dir = testing::fresh_temp_dir("safetensors_overflow");
  const std::string header = R"({"a":{"dtype":"F32","shape":[1e999],"data_offsets":[0,0]}})";
  std::string bytes(8, '\0');
  const std::uint64_t n = header.size();
  std::memcpy(bytes.data(), &n, 8);
  write_bytes(dir / "x.safetensors", bytes + header);
  expect_error([&] { SafetensorsFile f(dir / "x.safetensors"); }, "x.safetensors: corrupt header (not JSON)");
  expect_error([&] { SafetensorsFile f(dir / "x.safetensors"); }, "number overflow parsing '1e999'");
}

// Found by fuzzing (fuzz/int8_model_fuzz.cpp): a shape or byte offset written as a number that is
// not a whole one in range (1e68, 2.5, -8) was cast to an integer, undefined behaviour for 1e68.
TEST(Safetensors, ShapesAndOffsetsMustBeWholeNumbersInRange) {
  auto dir = testing::fresh_temp_dir("safetensors_numbers");
  for (const auto& [entry, problem] : std::vector<std::pair<std::string, std::string>>{
           {R"("shape":[1],"data_offsets":[1e68,1e68])", "tensor 'a': data_offsets must be two whole numbers from 0"},
           {R"("shape":[1],"data_offsets":[0,4.5])", "tensor 'a': data_offsets must be two whole numbers from 0"},
           {R"("shape":[1],"data_offsets":[-8,4])", "tensor 'a': data_offsets must be two whole numbers from 0"},
           {R"("shape":[1e30],"data_offsets":[0,4])", "tensor 'a': shape must be whole numbers"},
           {R"("shape":[0.5],"data_offsets":[0,4])", "tensor 'a': shape must be whole numbers"}}) {
    const std::string header = R"({"a":{"dtype":"F32",)" + entry + "}}";
    std::string bytes(8, '\0');
    const std::uint64_t n = header.size();
    std::memcpy(bytes.data(), &n, 8);
    write_bytes(dir / "x.safetensors", bytes + header + std::string(4, '\0'));
    expect_error([&] { SafetensorsFile f(dir / "x.safetensors"); }, "x.safetensors: corrupt header: " + problem);
  }
}

// Found by fuzzing: reading a tensor of no elements passed memcpy null pointers (the data section
// of a file holding only empty tensors is empty), undefined behaviour that UBSan reports.
TEST(Safetensors, ATensorWithNoElementsReadsAsNothing) {
  auto dir = testing::fresh_temp_dir("safetensors_empty");
  const std::string header = R"({"e":{"dtype":"F32","shape":[0,4],"data_offsets":[0,0]}})";
  std::string bytes(8, '\0');
  const std::uint64_t n = header.size();
  std::memcpy(bytes.data(), &n, 8);
  write_bytes(dir / "x.safetensors", bytes + header);
  SafetensorsFile f(dir / "x.safetensors");
  std::vector<float> none;
  f.read("e", {0, 4}, none.data());
  EXPECT_TRUE(f.data().empty());
}

TEST(Safetensors, ModelRoundTripAndRefusals) {
  auto dir = testing::fresh_temp_dir("safetensors_model");
  ModelConfig c = ModelConfig::preset("tiny");
  Transformer m(c);
  m.initialize(5);
  m.save_parameters(dir / "model.safetensors", {{"note", "test"}});
  Transformer loaded(c);
  loaded.load_parameters(dir / "model.safetensors");
  EXPECT_EQ(loaded.parameters_to_host(), m.parameters_to_host());
  EXPECT_EQ(SafetensorsFile(dir / "model.safetensors").metadata().at("note"), "test");

  const std::string good = read_bytes(dir / "model.safetensors");
  write_bytes(dir / "truncated.safetensors", good.substr(0, good.size() - 100));
  expect_error([&] { loaded.load_parameters(dir / "truncated.safetensors"); }, "truncated.safetensors");
  expect_error([&] { loaded.load_parameters(dir / "truncated.safetensors"); }, "truncated file?");
  std::string corrupt = good;
  corrupt[12] = '#';
  write_bytes(dir / "corrupt.safetensors", corrupt);
  expect_error([&] { loaded.load_parameters(dir / "corrupt.safetensors"); }, "corrupt header");
  write_bytes(dir / "short.safetensors", "abc");
  expect_error([&] { loaded.load_parameters(dir / "short.safetensors"); }, "not a safetensors file");

  ModelConfig other = c;
  other.d_ff = 48;
  Transformer different(other);
  expect_error([&] { different.load_parameters(dir / "model.safetensors"); },
               "tensor 'encoder.layers.0.ffn.fc1.weight' has shape [64, 32] but the model expects [48, 32]");
  // A failed load leaves the parameters as they were.
  EXPECT_EQ(loaded.parameters_to_host(), m.parameters_to_host());
}

TEST(ParameterLayout, OneBufferInDocumentedOrderWithFusedProjectionsAdjacent) {
  ModelConfig c = ModelConfig::preset("base");
  c.vocab_size = 37000;
  ParameterLayout layout(c);
  // The paper's base model with a 37k shared vocabulary has about 63M parameters (Table 3: 65M).
  EXPECT_NEAR(static_cast<double>(layout.total()), 63.1e6, 0.2e6);
  std::int64_t expected_offset = 0;
  for (const auto& t : layout.tensors()) {
    EXPECT_EQ(t.offset, expected_offset) << t.name;
    expected_offset += t.size;
  }
  const auto& q = layout.find("encoder.layers.0.self_attn.q_proj.weight");
  EXPECT_EQ(layout.find("encoder.layers.0.self_attn.k_proj.weight").offset, q.offset + 512 * 512);
  EXPECT_EQ(layout.find("encoder.layers.0.self_attn.v_proj.weight").offset, q.offset + 2 * 512 * 512);
  EXPECT_EQ(layout.find("encoder.layers.0.self_attn.q_proj.bias").offset, q.offset + 3 * 512 * 512);
  EXPECT_EQ(layout.find("decoder.layers.5.cross_attn.v_proj.weight").offset,
            layout.find("decoder.layers.5.cross_attn.k_proj.weight").offset + 512 * 512);
  EXPECT_THROW(layout.find("nope"), Error);
}

TEST(ModelConfig, PresetsFollowTable3) {
  const ModelConfig base = ModelConfig::preset("base"), big = ModelConfig::preset("big");
  EXPECT_EQ(base.encoder_layers, 6);
  EXPECT_EQ(base.d_model, 512);
  EXPECT_EQ(base.d_ff, 2048);
  EXPECT_EQ(base.heads, 8);
  EXPECT_EQ(base.d_k, 64);
  EXPECT_EQ(base.d_v, 64);
  EXPECT_FLOAT_EQ(base.dropout, 0.1f);
  EXPECT_FLOAT_EQ(base.label_smoothing, 0.1f);
  EXPECT_EQ(big.d_model, 1024);
  EXPECT_EQ(big.d_ff, 4096);
  EXPECT_EQ(big.heads, 16);
  EXPECT_FLOAT_EQ(big.dropout, 0.3f);
  EXPECT_THROW(ModelConfig::preset("huge"), Error);
}

TEST(ModelConfig, JsonRoundTripAndErrors) {
  auto dir = testing::fresh_temp_dir("model_config");
  ModelConfig c = ModelConfig::preset("small");
  c.positions = PositionEncoding::Learned;
  c.attention_window = 5;
  save_model_config((dir / "config.json").string(), c);
  const ModelConfig back = load_model_config((dir / "config.json").string());
  EXPECT_EQ(nlohmann::json(back), nlohmann::json(c));
  write_bytes(dir / "bad.json", R"({"preset": "small", "d_modle": 3})");
  expect_error([&] { load_model_config((dir / "bad.json").string()); }, "unknown key 'd_modle'");
  write_bytes(dir / "bad2.json", R"({"heads": 0})");
  expect_error([&] { load_model_config((dir / "bad2.json").string()); }, "heads must be positive");
  write_bytes(dir / "bad3.json", R"({"heads": )");
  expect_error([&] { load_model_config((dir / "bad3.json").string()); }, "not valid JSON");
}

// sentence_tokens (what the model was trained on) is written only where known, so that folders
// without it stay as they were, and read back checked against the model's own limit.
TEST(ModelConfig, SentenceTokensIsWrittenOnlyWhereKnownAndChecked) {
  auto dir = testing::fresh_temp_dir("model_config_sentence_tokens");
  ModelConfig c = ModelConfig::preset("small");
  EXPECT_FALSE(nlohmann::json(c).contains("sentence_tokens"));
  c.sentence_tokens = 42;
  save_model_config((dir / "config.json").string(), c);
  EXPECT_EQ(nlohmann::json::parse(read_file_bytes(dir / "config.json")).at("sentence_tokens"), 42);
  EXPECT_EQ(load_model_config((dir / "config.json").string()).sentence_tokens, 42);
  write_bytes(dir / "old.json", R"({"preset": "small"})");
  EXPECT_EQ(load_model_config((dir / "old.json").string()).sentence_tokens, 0);
  write_bytes(dir / "long.json", R"({"max_positions": 64, "sentence_tokens": 64})");
  expect_error([&] { load_model_config((dir / "long.json").string()); },
               "sentence_tokens must be from 0 (not known) to max_positions - 1 (63), got 64");
  write_bytes(dir / "negative.json", R"({"sentence_tokens": -1})");
  expect_error([&] { load_model_config((dir / "negative.json").string()); }, "sentence_tokens must be from 0");
}

// A model file written by attn carries a SHA-256 of its data; one flipped bit is refused on load,
// naming the file. A file without the checksum (exported from elsewhere) still loads.
TEST(ModelFile, AFlippedBitIsRefusedOnLoad) {
  auto dir = testing::fresh_temp_dir("model_checksum");
  ModelConfig c = ModelConfig::preset("tiny");
  Transformer a(c);
  a.initialize(3);
  a.save_parameters(dir / "model.safetensors", {});
  Transformer b(c);
  b.load_parameters(dir / "model.safetensors");  // intact: loads
  std::string bytes;
  {
    std::ifstream in(dir / "model.safetensors", std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  bytes[bytes.size() - 100] ^= 0x10;  // one bit of a weight
  write_bytes(dir / "flipped.safetensors", bytes);
  expect_error([&] { b.load_parameters(dir / "flipped.safetensors"); },
               (dir / "flipped.safetensors").string() + ": corrupted model file: the data does not match its SHA-256");
  // Without the checksum (as PyTorch would write it): loads.
  const std::vector<float> host = a.parameters_to_host();
  std::vector<TensorToWrite> tensors;
  for (const auto& t : a.layout().tensors()) tensors.push_back({t.name, t.shape, host.data() + t.offset});
  write_safetensors(dir / "plain.safetensors", tensors, {});
  b.load_parameters(dir / "plain.safetensors");
  EXPECT_EQ(b.parameters_to_host(), host);
}

// Every value of the wrong type or range names the file, the key and what is accepted; no JSON
// library exception escapes.
TEST(ModelConfig, WrongTypesNameTheFileTheKeyAndTheAcceptedValues) {
  auto dir = testing::fresh_temp_dir("model_config_types");
  const std::vector<std::pair<std::string, std::string>> cases{
      {R"({"positions": 1})", "'positions' must be \"sinusoidal\" or \"learned\", got 1"},
      {R"({"positions": "rotary"})", "'positions' must be \"sinusoidal\" or \"learned\", got \"rotary\""},
      {R"({"d_model": "big"})", "'d_model' must be a whole number, got \"big\""},
      {R"({"d_model": 3.5})", "'d_model' must be a whole number, got 3.5"},
      {R"({"heads": 1e12})", "'heads' must be a whole number"},
      {R"({"heads": 4294967304})", "'heads' must be a whole number from"},
      {R"({"dropout": "0.1"})", "'dropout' must be a number, got \"0.1\""},
      // Found by fuzzing: 4e105 passed as a float (infinity), was saved as null and refused on reload.
      {R"({"layernorm_eps": 4e105})", "'layernorm_eps' must be a number a float holds, got 4e+105"},
      {R"({"label_smoothing": -1e39})", "'label_smoothing' must be a number a float holds, got -1e+39"},
      {R"({"layers": [6]})", "'layers' must be a whole number, got [6]"},
      {R"({"preset": 3})", "'preset' must be one of"},
  };
  for (const auto& [text, fragment] : cases) {
    write_bytes(dir / "config.json", text);
    expect_error([&] { load_model_config((dir / "config.json").string()); }, fragment);
    expect_error([&] { load_model_config((dir / "config.json").string()); }, (dir / "config.json").string() + ":");
  }
}

// Found by fuzzing (fuzz/model_config_fuzz.cpp): a number beyond double made nlohmann throw
// out_of_range instead of parse_error, which escaped read_json_file without the file's name.
TEST(ModelConfig, ANumberTooLargeForJsonIsInvalidJsonNamingTheFile) {
  auto dir = testing::fresh_temp_dir("model_config_overflow");
  write_bytes(dir / "config.json", R"({"d_model": 1e999})");
  expect_error([&] { load_model_config((dir / "config.json").string()); },
               (dir / "config.json").string() +
                   ": not valid JSON: [json.exception.out_of_range.406] number overflow "
                   "parsing '1e999'");
}

// The parameter count from the sizes alone equals the layout's (the tensors the model allocates).
TEST(ModelConfig, ParameterCountFromTheSizesEqualsTheLayout) {
  for (const auto& name : ModelConfig::preset_names()) {
    for (const auto positions : {PositionEncoding::Sinusoidal, PositionEncoding::Learned}) {
      ModelConfig c = ModelConfig::preset(name);
      c.positions = positions;
      c.d_v = c.d_k + 8;
      c.decoder_layers = c.encoder_layers + 1;
      EXPECT_EQ(c.parameter_count(), static_cast<double>(ParameterLayout(c).total())) << name;
    }
  }
}

// Sizes that cannot fit in this machine's memory are refused before anything is allocated, with
// the bytes they would need.
TEST(ModelConfig, SizesBeyondMemoryAreRefusedBeforeAllocation) {
  auto dir = testing::fresh_temp_dir("model_config_size");
  write_bytes(dir / "config.json", R"({"d_model": 1000000000})");
  expect_error([&] { load_model_config((dir / "config.json").string()); }, "bytes for the weights alone");
  write_bytes(dir / "config.json", R"({"encoder_layers": 2000000000, "decoder_layers": 2000000000})");
  expect_error([&] { load_model_config((dir / "config.json").string()); }, "bytes for the weights alone");
  ModelConfig c = ModelConfig::preset("small");
  c.d_ff = 2000000000;
  expect_error([&] { Transformer model(c); }, "bytes for the weights alone");
}

}  // namespace
}  // namespace attn
