// The lexical shortlist: its table worked by hand from IBM Model 1's first EM step, the union per
// batch, the file refused when corrupt or for another vocabulary, the output layer restricted to
// the shortlist against the full one (fp32, bf16 products, int8 weights), and decoding with a
// shortlist that holds every piece against decoding without one.
#include "decode/shortlist.h"

#include <cmath>
#include <fstream>
#include <memory>
#include <numeric>
#include <sstream>

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "common/tiny_task.h"
#include "core/error.h"
#include "core/sha256.h"
#include "core/special_tokens.h"
#include "data/data_test_support.h"
#include "decode/beam_search.h"
#include "decode/incremental_decoder.h"
#include "kernels/cpu/ops.h"

namespace attn {
namespace {

class ShortlistTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::filesystem::path(testing::fresh_temp_dir("shortlist"));
    vocabulary_ = new data::Vocabulary(data::Vocabulary::load(testing::train_fixture_vocabulary(*dir_, 400)));
    other_ = new data::Vocabulary(data::Vocabulary::load(testing::train_fixture_vocabulary(*dir_, 410, "other")));
  }
  static void TearDownTestSuite() {
    delete vocabulary_;
    delete other_;
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }
  // Source [5 6] → target [7 8], and [5] → [7]; target 9 once more in a third pair [10] → [9 9 8].
  static Shortlist hand_worked(int per_source = 2, int frequent = 2) {
    return Shortlist::build(*vocabulary_, {{5, 6}, {5}, {10}}, {{7, 8}, {7}, {9, 9, 8}}, {per_source, frequent, 1});
  }
  static std::string error_loading(const std::filesystem::path& file, const data::Vocabulary& vocabulary) {
    try {
      Shortlist::load(file, vocabulary);
    } catch (const Error& e) {
      return e.what();
    }
    return "(loaded)";
  }
  static std::filesystem::path* dir_;
  static data::Vocabulary *vocabulary_, *other_;
};
std::filesystem::path* ShortlistTest::dir_ = nullptr;
data::Vocabulary* ShortlistTest::vocabulary_ = nullptr;
data::Vocabulary* ShortlistTest::other_ = nullptr;

// One EM step from the uniform start: target word f_j of a pair with l source words is shared
// equally by the l words and NULL, so c(f, e) = Σ over pairs of #f·#e / (l + 1), and
// t(f | e) = c(f, e) / Σ_f' c(f', e).
//   e = 5: c(7) = 1/3 + 1/2, c(8) = 1/3        → t(7|5) = 5/7, t(8|5) = 2/7
//   e = 6: c(7) = c(8) = 1/3                   → 1/2 each (tie: lower id first)
//   e = 10: c(9) = 2/2, c(8) = 1/2             → t(9|10) = 2/3, t(8|10) = 1/3
// Target counts: 7 ×2, 8 ×2, 9 ×2: frequent by count, ties by id.
TEST_F(ShortlistTest, CandidatesAndFrequentPiecesAsWorkedByHand) {
  const Shortlist s = hand_worked();
  const auto expect = [&](std::int32_t source, std::vector<std::pair<std::int32_t, double>> want) {
    const auto& got = s.candidates(source);
    ASSERT_EQ(got.size(), want.size()) << "source " << source;
    for (std::size_t j = 0; j < want.size(); ++j) {
      EXPECT_EQ(got[j].target, want[j].first) << "source " << source << " candidate " << j;
      EXPECT_NEAR(got[j].probability, want[j].second, 1e-6) << "source " << source << " candidate " << j;
    }
  };
  expect(5, {{7, 5.0 / 7}, {8, 2.0 / 7}});
  expect(6, {{7, 0.5}, {8, 0.5}});
  expect(10, {{9, 2.0 / 3}, {8, 1.0 / 3}});
  expect(7, {});  // a target piece, never a source
  EXPECT_EQ(s.frequent(), (std::vector<std::int32_t>{7, 8}));
  EXPECT_EQ(s.vocabulary_size(), vocabulary_->size());
  // Fewer kept: the first of each list.
  const Shortlist one = hand_worked(1, 1);
  EXPECT_EQ(one.candidates(6).size(), 1u);
  EXPECT_EQ(one.candidates(6)[0].target, 7);
  EXPECT_EQ(one.frequent(), (std::vector<std::int32_t>{7}));
}

TEST_F(ShortlistTest, SelectIsTheUnionOfTheSpecialsTheFrequentAndEachSourcesFirstK) {
  const Shortlist s = hand_worked(2, 1);  // frequent: 7
  using Ids = std::vector<std::int32_t>;
  EXPECT_EQ(s.select({{10}}, 1), (Ids{kPadId, kUnkId, kBosId, kEosId, 7, 9}));
  EXPECT_EQ(s.select({{10}}, 2), (Ids{0, 1, 2, 3, 7, 8, 9}));
  EXPECT_EQ(s.select({{6}, {10}}, 1), (Ids{0, 1, 2, 3, 7, 9}));
  EXPECT_EQ(s.select({{5, 5}, {}}, 1), (Ids{0, 1, 2, 3, 7}));
  EXPECT_EQ(s.select({{10}}, 0), (Ids{0, 1, 2, 3, 7}));  // no candidates: specials and frequent
  EXPECT_EQ(s.select({{10}}, 50), s.select({{10}}, 2));  // k beyond what was kept
  EXPECT_EQ(s.select({{42}}, 5), (Ids{0, 1, 2, 3, 7}));  // a piece with no candidates
}

// Padded to a multiple of the width: the sources' next candidates first, then the lowest ids not in.
TEST_F(ShortlistTest, SelectPadsTheWidthWithNextCandidatesThenTheLowestIds) {
  const Shortlist s = hand_worked(2, 1);  // 5: 7, 8; 6: 7, 8; 10: 9, 8; frequent: 7
  using Ids = std::vector<std::int32_t>;
  EXPECT_EQ(s.select({{10}}, 1, 7), (Ids{0, 1, 2, 3, 7, 8, 9}));         // 6 → 7: 10's second candidate, 8
  EXPECT_EQ(s.select({{10}}, 1, 8), (Ids{0, 1, 2, 3, 4, 7, 8, 9}));      // then the lowest id not in, 4
  EXPECT_EQ(s.select({{5}, {6}}, 0, 8), (Ids{0, 1, 2, 3, 4, 5, 7, 8}));  // k 0: first candidates, then seconds
  EXPECT_EQ(s.select({{10}}, 2, 7), s.select({{10}}, 2));                // 7 already: nothing added
  EXPECT_EQ(s.select({{10}}, 1, 1), s.select({{10}}, 1));                // 1: no padding
  const std::vector<std::int32_t> all = s.select({{10}}, 1, 1 << 20);    // more than the vocabulary
  ASSERT_EQ(all.size(), static_cast<std::size_t>(s.vocabulary_size()));
  for (std::size_t id = 0; id < all.size(); ++id) EXPECT_EQ(all[id], static_cast<std::int32_t>(id));
  for (int multiple : {3, 16, 64})
    for (int k : {0, 1, 2}) {
      const std::size_t width = s.select({{5, 10}, {6}}, k, multiple).size();
      EXPECT_EQ(width % static_cast<std::size_t>(multiple), 0u) << multiple << " " << k;
    }
}

TEST_F(ShortlistTest, SavedAndLoadedBack) {
  const Shortlist s = hand_worked();
  const auto file = *dir_ / "round.shortlist";
  s.save(file);
  const Shortlist back = Shortlist::load(file, *vocabulary_);
  EXPECT_EQ(back.frequent(), s.frequent());
  EXPECT_EQ(back.options().per_source, 2);
  EXPECT_EQ(back.options().frequent, 2);
  EXPECT_EQ(back.options().iterations, 1);
  for (std::int32_t e = 0; e < vocabulary_->size(); ++e) {
    ASSERT_EQ(back.candidates(e).size(), s.candidates(e).size()) << e;
    for (std::size_t j = 0; j < s.candidates(e).size(); ++j) {
      EXPECT_EQ(back.candidates(e)[j].target, s.candidates(e)[j].target);
      EXPECT_NEAR(back.candidates(e)[j].probability, s.candidates(e)[j].probability, 1e-6);
    }
  }
}

TEST_F(ShortlistTest, BadFilesAreRefusedNamingTheFileAndProblem) {
  const auto file = *dir_ / "good.shortlist";
  hand_worked().save(file);
  std::ifstream in(file, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  const std::string good = bytes.str();
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(*dir_ / name, std::ios::binary) << text;
    return *dir_ / name;
  };
  const auto refused = [&](const std::filesystem::path& path, const data::Vocabulary& v, const std::string& message) {
    const std::string e = error_loading(path, v);
    EXPECT_NE(e.find(path.string()), std::string::npos) << e;
    EXPECT_NE(e.find(message), std::string::npos) << e;
  };
  refused(file, *other_, "built for another vocabulary (400 pieces");
  std::string flipped = good;
  flipped[good.find("frequent 7") + 9] = '9';
  refused(write("flipped", flipped), *vocabulary_, "corrupted: the contents do not match");
  refused(write("truncated", good.substr(0, good.size() / 2)), *vocabulary_, "truncated");
  refused(write("other", "hello\n"), *vocabulary_, "not an attn shortlist");
  refused(write("magic only", "attn shortlist 1\n"), *vocabulary_, "truncated");  // found by fuzzing (UBSan)
  refused(*dir_ / "missing", *vocabulary_, "cannot open");
  // Well-formed checksums over bad contents: the line is named.
  const std::string head = "attn shortlist 1\nvocabulary " + vocabulary_fingerprint(*vocabulary_) + " " +
                           std::to_string(vocabulary_->size()) + "\nper_source 2 frequent 1 iterations 1\n";
  const auto sealed = [](std::string text) { return text + "sha256 " + sha256_hex(text) + "\n"; };
  refused(write("bad-id", sealed(head + "frequent 7\n5 7:0.5 99999:0.5\n")), *vocabulary_,
          ":5: \"99999\" is not a piece id");
  refused(write("bad-p", sealed(head + "frequent 7\n5 7:1.5\n")), *vocabulary_,
          ":5: \"1.5\" is not a probability in (0, 1]");
  refused(write("blank", sealed(head + "frequent 7\n\n5 7:0.5\n")), *vocabulary_, ":5: a blank line");
  refused(write("order", sealed(head + "frequent 7\n6 7:0.5\n5 7:0.5\n")), *vocabulary_,
          ":6: source ids must ascend, each once");
  refused(write("too-many", sealed(head + "frequent 7\n5 7:0.5 8:0.2 9:0.1\n")), *vocabulary_,
          ":5: more candidates than per_source 2");
  refused(write("options", sealed("attn shortlist 1\nvocabulary " + vocabulary_fingerprint(*vocabulary_) + " " +
                                  std::to_string(vocabulary_->size()) + "\nper_source 0 frequent 1 iterations 1\n")),
          *vocabulary_, ":3: expected \"per_source N frequent N iterations N\"");
  for (const std::string options : {"per_source 2 frequent 1 attention_layer -1", "per_source 2 frequent 1 bogus 1",
                                    "per_source 2 frequent 1 attention_layer x", "per_source 2 frequent 1"})
    refused(write("options " + options, sealed("attn shortlist 1\nvocabulary " + vocabulary_fingerprint(*vocabulary_) +
                                               " " + std::to_string(vocabulary_->size()) + "\n" + options + "\n")),
            *vocabulary_,
            ":3: expected \"per_source N frequent N iterations N\" or \"per_source N frequent N attention_layer L\"");
  EXPECT_EQ(error_loading(write("fine", sealed(head + "frequent 7\n5 7:0.5\n")), *vocabulary_), "(loaded)");
}

// log-softmax over a subset of the full log-probabilities: lp[i] - log Σ_{j in ids} exp(lp[j]).
std::vector<double> renormalised(const std::vector<float>& full, const std::vector<std::int32_t>& ids) {
  double max = -INFINITY;
  for (std::int32_t id : ids) max = std::max(max, static_cast<double>(full[static_cast<std::size_t>(id)]));
  double sum = 0;
  for (std::int32_t id : ids) sum += std::exp(full[static_cast<std::size_t>(id)] - max);
  std::vector<double> out;
  for (std::int32_t id : ids) out.push_back(full[static_cast<std::size_t>(id)] - max - std::log(sum));
  return out;
}

// The output layer restricted to a shortlist gives, per row, the full layer's log-probabilities of
// those pieces renormalised over them: the same products on gathered weight rows, in every
// precision the decoder runs in (bf16 products where the CPU has AVX512-BF16: the test says it skipped
// that case otherwise, after checking the others).
TEST(ShortlistDecoding, RestrictedOutputLayerEqualsTheFullOneRenormalisedInEveryPrecision) {
  ModelConfig c = ModelConfig::preset("tiny");
  Transformer f32(c);
  f32.initialize(21);
  const auto dir = testing::fresh_temp_dir("shortlist_precisions");
  f32.save_parameters(dir / "f32.safetensors");
  Transformer int8(c, cpu_backend(), WeightFormat::int8);
  int8.load_parameters(dir / "f32.safetensors");
  std::vector<Transformer*> models{&f32, &int8};
  const bool has_bf16 = cpu::bf16_matmul_supported();
  std::unique_ptr<Transformer> bf16;
  if (has_bf16) {
    bf16 = std::make_unique<Transformer>(c, cpu_backend(MatmulPrecision::bf16));
    bf16->load_parameters(dir / "f32.safetensors");
    models.push_back(bf16.get());
  }
  const std::vector<std::int32_t> ids{0, 1, 2, 3, 5, 9, 17, 18, 40, c.vocab_size - 1};
  const std::vector<std::int32_t> src{6, 7, 8, kEosId, kPadId, 9, 10, kEosId, kPadId, kPadId}, lengths{4, 3};
  for (Transformer* m : models) {
    SCOPED_TRACE(m == &f32 ? "fp32" : m == &int8 ? "int8 weights" : "bf16 products");
    IncrementalDecoder full(*m), shortlisted(*m);
    shortlisted.set_output_ids(ids);
    EXPECT_EQ(shortlisted.output_width(), static_cast<int>(ids.size()));
    EXPECT_EQ(shortlisted.output_column(17), 6);
    EXPECT_EQ(shortlisted.output_column(16), -1);
    full.start(src.data(), lengths.data(), 2, 5, 1, 4);
    shortlisted.start(src.data(), lengths.data(), 2, 5, 1, 4);
    std::vector<std::int32_t> tokens{kBosId, kBosId};
    for (int step = 0; step < 3; ++step) {
      std::vector<float> all(static_cast<std::size_t>(2) * c.vocab_size), some(2 * ids.size());
      m->backend().copy_to_host(all.data(), full.step(tokens.data()), all.size() * sizeof(float));
      m->backend().copy_to_host(some.data(), shortlisted.step(tokens.data()), some.size() * sizeof(float));
      for (int r = 0; r < 2; ++r) {
        const std::vector<float> row(all.begin() + r * c.vocab_size, all.begin() + (r + 1) * c.vocab_size);
        const auto want = renormalised(row, ids);
        for (std::size_t j = 0; j < ids.size(); ++j)
          EXPECT_NEAR(some[r * ids.size() + j], want[j], 2e-5) << "step " << step << " row " << r << " id " << ids[j];
      }
      tokens = {ids[static_cast<std::size_t>(4 + step)], ids[static_cast<std::size_t>(5 + step)]};
    }
  }
  std::filesystem::remove_all(dir);
  if (!has_bf16) GTEST_SKIP() << "bf16 products: this CPU has no AVX512-BF16 (fp32 and int8 weights checked)";
}

// Every piece in the shortlist: the same search over the same numbers, so the same hypotheses
// and scores; a real shortlist: no output token outside it; none without </s>: refused.
TEST(ShortlistDecoding, EveryPieceShortlistedDecodesAsTheFullVocabulary) {
  const Transformer model = testing::tiny_task::trained_model();
  const std::vector<std::vector<std::int32_t>> sources{{4, 5, 6}, {7}, {11, 10, 9, 8, 4}, {6, 6}};
  SearchOptions options;
  options.beam_size = 4;
  options.n_best = 3;
  IncrementalDecoder plain(model), every(model), some(model);
  std::vector<std::int32_t> all(static_cast<std::size_t>(model.config().vocab_size));
  std::iota(all.begin(), all.end(), 0);
  every.set_output_ids(all);
  const auto want = beam_search(plain, sources, options);
  const auto got = beam_search(every, sources, options);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got[i].size(), want[i].size()) << i;
    for (std::size_t h = 0; h < want[i].size(); ++h) {
      EXPECT_EQ(got[i][h].tokens, want[i][h].tokens) << i << " " << h;
      EXPECT_NEAR(got[i][h].log_prob, want[i][h].log_prob, 1e-6) << i << " " << h;
      EXPECT_NEAR(got[i][h].score, want[i][h].score, 1e-6) << i << " " << h;
    }
  }
  // Only the two-token renderings' second token (28) and a few single ones allowed.
  const std::vector<std::int32_t> allowed{0, 1, 2, 3, 12, 13, 20, 28};
  some.set_output_ids(allowed);
  for (const auto& hyps : beam_search(some, sources, options))
    for (const auto& h : hyps)
      for (std::int32_t t : h.tokens) EXPECT_TRUE(std::binary_search(allowed.begin(), allowed.end(), t)) << t;
  IncrementalDecoder no_end(model);
  no_end.set_output_ids({0, 1, 2, 12, 13});
  EXPECT_THROW(beam_search(no_end, sources, options), Error);
}

}  // namespace
}  // namespace attn
