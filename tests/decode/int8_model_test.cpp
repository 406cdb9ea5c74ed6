// int8 models: the file format (docs/model-format.md, "int8 models") written and read back, bad
// files refused with the file and the tensor named, and translations of a trained tiny model in
// int8 close to its float32 ones.
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "common/tiny_task.h"
#include "common/toy_batch.h"
#include "core/error.h"
#include "decode/beam_search.h"
#include "decode/incremental_decoder.h"
#include "kernels/cpu/quantize.h"
#include "model/safetensors.h"

namespace attn {
namespace {

using namespace testing::tiny_task;

class Int8Model : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_ = new Transformer(trained_model());
    dir_ = new std::filesystem::path(testing::fresh_temp_dir("int8_model"));
    model_->save_parameters(*dir_ / "f32.safetensors");
  }
  static void TearDownTestSuite() {
    delete model_;
    delete dir_;
  }
  static Transformer int8_model() {
    Transformer q(model_->config(), cpu_backend(), WeightFormat::int8);
    q.load_parameters(*dir_ / "f32.safetensors");  // quantized as it loads
    return q;
  }
  static std::string error_loading(const std::filesystem::path& file) {
    Transformer q(model_->config(), cpu_backend(), WeightFormat::int8);
    try {
      q.load_parameters(file);
    } catch (const Error& e) {
      return e.what();
    }
    return "(loaded)";
  }
  static Transformer* model_;
  static std::filesystem::path* dir_;
};
Transformer* Int8Model::model_ = nullptr;
std::filesystem::path* Int8Model::dir_ = nullptr;

// A copy of an attn model file with some tensors replaced or left out, and no checksum (so that
// the checks behind it are reached).
void rewrite(const std::filesystem::path& from, const std::filesystem::path& to,
             const std::function<bool(const std::string&, std::string&, std::vector<std::int64_t>&,
                                      std::vector<char>&)>& change) {
  const SafetensorsFile file(from);
  std::vector<std::string> names;
  std::vector<std::vector<char>> bytes;
  std::vector<TensorToWrite> tensors;
  for (const auto& [name, e] : file.entries()) {
    std::string dtype = e.dtype;
    std::vector<std::int64_t> shape = e.shape;
    std::vector<char> data(file.data().begin() + e.begin, file.data().begin() + e.end);
    if (!change(name, dtype, shape, data)) continue;
    names.push_back(name);
    bytes.push_back(std::move(data));
    tensors.push_back({name, shape, nullptr, dtype});
  }
  for (std::size_t i = 0; i < tensors.size(); ++i) tensors[i].data = bytes[i].data();
  write_safetensors(to, tensors, {{"format", "attn"}});
}

TEST_F(Int8Model, FileHoldsInt8MatricesWithRowScalesAndReadsBackTheSame) {
  const Transformer q = int8_model();
  q.save_parameters(*dir_ / "int8.safetensors");
  const SafetensorsFile file(*dir_ / "int8.safetensors");
  EXPECT_EQ(file.metadata().at("attn.weights"), "int8");
  int matrices = 0;
  for (const auto& t : q.layout().tensors()) {
    if (t.shape.size() == 2) {
      ++matrices;
      EXPECT_EQ(file.dtype(t.name), "I8") << t.name;
      EXPECT_EQ(file.entries().at(t.name + "_scale").shape, std::vector<std::int64_t>{t.shape[0]}) << t.name;
    } else {
      EXPECT_EQ(file.dtype(t.name), "F32") << t.name;
    }
  }
  EXPECT_EQ(file.entries().size(), q.layout().tensors().size() + matrices);
  // One byte per matrix element, four per row scale and per float element: nothing else.
  std::size_t expected_bytes = 0;
  for (const auto& t : q.layout().tensors())
    expected_bytes += t.shape.size() == 2 ? t.size + 4 * t.shape[0] : 4 * t.size;
  EXPECT_EQ(file.data().size(), expected_bytes);
  // Every stored value is scale · q, within half a step of the float32 weight.
  const std::vector<float> original = model_->parameters_to_host();
  const std::vector<float> quantized = q.parameters_to_host();
  for (const auto& t : q.layout().tensors()) {
    if (t.shape.size() != 2) {
      for (std::int64_t i = 0; i < t.size; ++i) ASSERT_EQ(quantized[t.offset + i], original[t.offset + i]) << t.name;
      continue;
    }
    std::vector<float> scale(static_cast<std::size_t>(t.shape[0]));
    file.read(t.name + "_scale", {t.shape[0]}, scale.data());
    for (std::int64_t i = 0; i < t.size; ++i) {
      const float s = scale[static_cast<std::size_t>(i / t.shape[1])];
      ASSERT_LE(std::fabs(quantized[t.offset + i] - original[t.offset + i]), 0.5f * s * 1.0001f) << t.name << " " << i;
    }
  }
  // Read back into an int8 model: the same q and scales; into a float32 model: scale · q.
  Transformer again(q.config(), cpu_backend(), WeightFormat::int8);
  again.load_parameters(*dir_ / "int8.safetensors");
  EXPECT_EQ(again.parameters_to_host(), quantized);
  Transformer widened(q.config());
  widened.load_parameters(*dir_ / "int8.safetensors");
  EXPECT_EQ(widened.parameters_to_host(), quantized);
}

TEST_F(Int8Model, CorruptedOrMismatchedFilesAreRefused) {
  const Transformer q = int8_model();
  const auto good = *dir_ / "good.safetensors";
  q.save_parameters(good);
  const std::string fc1 = "decoder.layers.0.ffn.fc1.weight";
  {  // a flipped bit in the data: the checksum
    std::fstream f(good, std::ios::in | std::ios::out | std::ios::binary);
    std::uint64_t header = 0;
    f.read(reinterpret_cast<char*>(&header), 8);
    const auto at = static_cast<std::streamoff>(8 + header + 1000);
    f.seekg(at);
    char c = 0;
    f.read(&c, 1);
    f.seekp(at);
    c ^= 4;
    f.write(&c, 1);
    f.close();
    const std::string e = error_loading(good);
    EXPECT_NE(e.find("good.safetensors"), std::string::npos) << e;
    EXPECT_NE(e.find("SHA-256"), std::string::npos) << e;
  }
  q.save_parameters(good);
  struct Case {
    std::string what, expected;
    std::function<bool(const std::string&, std::string&, std::vector<std::int64_t>&, std::vector<char>&)> change;
  };
  const std::vector<Case> cases = {
      {"scale missing", "missing tensor '" + fc1 + "_scale'",
       [&](const std::string& n, std::string&, std::vector<std::int64_t>&, std::vector<char>&) {
         return n != fc1 + "_scale";
       }},
      {"a zero scale", "'" + fc1 + "_scale' row 3: a scale must be a finite positive float",
       [&](const std::string& n, std::string&, std::vector<std::int64_t>&, std::vector<char>& d) {
         if (n == fc1 + "_scale") std::fill(d.begin() + 12, d.begin() + 16, 0);
         return true;
       }},
      {"a NaN scale", "'" + fc1 + "_scale' row 0: a scale must be a finite positive float",
       [&](const std::string& n, std::string&, std::vector<std::int64_t>&, std::vector<char>& d) {
         const float nan = std::nanf("");
         if (n == fc1 + "_scale") std::memcpy(d.data(), &nan, 4);
         return true;
       }},
      {"-128", "'" + fc1 + "' row 0 column 5: -128 is outside",
       [&](const std::string& n, std::string&, std::vector<std::int64_t>&, std::vector<char>& d) {
         if (n == fc1) d[5] = static_cast<char>(-128);
         return true;
       }},
      {"scales of another shape", "'" + fc1 + "_scale' has shape",
       [&](const std::string& n, std::string&, std::vector<std::int64_t>& s, std::vector<char>& d) {
         if (n == fc1 + "_scale") s = {s[0] - 1}, d.resize(d.size() - 4);
         return true;
       }},
      {"int8 rows of another model", "'" + fc1 + "' has shape",
       [&](const std::string& n, std::string&, std::vector<std::int64_t>& s, std::vector<char>& d) {
         if (n == fc1) s = {s[1], s[0]};
         (void)d;
         return true;
       }},
      {"int8 where float is kept", "'decoder.layers.0.ffn.fc1.bias' has dtype I8, expected F32",
       [&](const std::string& n, std::string& t, std::vector<std::int64_t>&, std::vector<char>& d) {
         if (n == "decoder.layers.0.ffn.fc1.bias") t = "I8", d.resize(d.size() / 4);
         return true;
       }},
      {"a scale without its matrix in int8", "tensor '" + fc1 + "_scale' is not part of this model",
       [&](const std::string& n, std::string& t, std::vector<std::int64_t>&, std::vector<char>& d) {
         if (n != fc1) return true;
         // fc1 in float32 (its values as the int8 numbers): valid alone, but the scale is then foreign
         std::vector<char> f(d.size() * 4);
         for (std::size_t i = 0; i < d.size(); ++i) {
           const float v = static_cast<std::int8_t>(d[i]);
           std::memcpy(f.data() + 4 * i, &v, 4);
         }
         d = std::move(f), t = "F32";
         return true;
       }},
  };
  for (const Case& c : cases) {
    const auto bad = *dir_ / "bad.safetensors";
    rewrite(good, bad, c.change);
    const std::string e = error_loading(bad);
    EXPECT_NE(e.find("bad.safetensors"), std::string::npos) << c.what << ": " << e;
    EXPECT_NE(e.find(c.expected), std::string::npos) << c.what << ": " << e;
  }
  // The unchanged copy loads (the cases fail for their change, not for the copying).
  rewrite(good, *dir_ / "copy.safetensors",
          [](const std::string&, std::string&, std::vector<std::int64_t>&, std::vector<char>&) { return true; });
  EXPECT_EQ(error_loading(*dir_ / "copy.safetensors"), "(loaded)");
}

TEST_F(Int8Model, TranslationsStayCloseToFloat32) {
  Transformer q = int8_model();
  Random rng(99);
  std::vector<std::vector<std::int32_t>> sources(96);
  for (auto& s : sources) {
    s.resize(1 + rng.below(kWords));
    for (auto& w : s) w = kFirstWord + static_cast<std::int32_t>(rng.below(kWords));
  }
  IncrementalDecoder f32_decoder(*model_), int8_decoder(q);
  for (int beam : {1, 4}) {
    SearchOptions opt;
    opt.beam_size = beam;
    const auto f32 = beam_search(f32_decoder, sources, opt);
    const auto int8 = beam_search(int8_decoder, sources, opt);
    int same = 0, learned = 0;
    double worst = 0;
    for (std::size_t i = 0; i < sources.size(); ++i) {
      same += f32[i][0].tokens == int8[i][0].tokens;
      learned += int8[i][0].tokens == single_rendering(sources[i]);
      // The int8 model's log-probability of its output, against the float32 model's of the same
      // output: quantization moves it by little per token.
      const testing::ToyBatch batch({sources[i]}, {int8[i][0].tokens});
      const double f32_of_it = model_->sentence_log_probs(batch.view())[0];
      worst = std::max(worst, std::fabs(f32_of_it - int8[i][0].log_prob) / (int8[i][0].tokens.size() + 1));
    }
    std::cout << "beam " << beam << ": " << same << "/" << sources.size()
              << " translations as float32's, largest log-prob change per token " << worst << "\n";
    EXPECT_GE(same, 93) << "beam " << beam;
    EXPECT_GE(learned, 93) << "beam " << beam;
    EXPECT_LT(worst, 0.05) << "beam " << beam;
  }
}

// The products really run in int8, activations quantized too: against a float32 model holding the
// same weights widened (scale · q, exact in float), the int8 model's log-probabilities differ on
// nearly every sentence (by the activations' rounding; a model that widened its weights at load and
// multiplied in float would differ by float rounding only, ~1e-7) and stay within a bound.
TEST_F(Int8Model, ProductsRunInInt8NotOnWidenedWeights) {
  Transformer q = int8_model();
  Transformer widened(model_->config(), cpu_backend(), WeightFormat::f32);
  widened.set_parameters(q.parameters_to_host());
  Random rng(7);
  int differ = 0;
  double worst = 0, total = 0;
  const int n = 64;
  for (int i = 0; i < n; ++i) {
    std::vector<std::int32_t> source(2 + rng.below(kWords - 1));
    for (auto& w : source) w = kFirstWord + static_cast<std::int32_t>(rng.below(kWords));
    const testing::ToyBatch batch({source}, {single_rendering(source)});
    const double a = q.sentence_log_probs(batch.view())[0], b = widened.sentence_log_probs(batch.view())[0];
    const double per_token = std::fabs(a - b) / static_cast<double>(source.size() + 1);
    differ += per_token > 1e-5;
    worst = std::max(worst, per_token);
    total += per_token;
  }
  std::cout << "int8 against widened float32: " << differ << "/" << n << " sentences differ by > 1e-5 per token, mean "
            << total / n << ", largest " << worst << " (activation levels " << cpu::activation_levels() << ")\n";
  EXPECT_GE(differ, n * 9 / 10);
  EXPECT_LT(worst, 0.05);
}

}  // namespace
}  // namespace attn
