#pragma once
// Shared by the data tests: a small vocabulary trained on committed text (Genesis 1-5, KJV and
// Reina-Valera 1909, both in the public domain), and small-file and error helpers.
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "data/vocabulary.h"
#include "data/vocabulary_training.h"

namespace attn::testing {

inline std::filesystem::path fixture(const std::string& name) {
  return std::filesystem::path(ATTN_SOURCE_DIR) / "tests" / "data" / "fixtures" / name;
}

// Trains on fixtures genesis.en + genesis.es into dir/PREFIX.model and returns that path.
inline std::filesystem::path train_fixture_vocabulary(const std::filesystem::path& dir, int size = 1000,
                                                      const std::string& prefix = "vocab") {
  data::VocabularyTrainingOptions options;
  options.inputs = {fixture("genesis.en"), fixture("genesis.es")};
  options.model_prefix = dir / prefix;
  options.vocab_size = size;
  return data::train_vocabulary(options).model_file;
}

// A suite whose tests share one vocabulary trained on the fixtures (train_fixture_vocabulary), in
// a fresh folder made for the suite and removed after it.
class FixtureVocabularyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::filesystem::path(fresh_temp_dir(::testing::UnitTest::GetInstance()->current_test_suite()->name()));
    vocabulary_ = new data::Vocabulary(data::Vocabulary::load(train_fixture_vocabulary(*dir_)));
  }
  static void TearDownTestSuite() {
    delete vocabulary_;
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }
  static const data::Vocabulary& vocabulary() { return *vocabulary_; }
  static const std::filesystem::path& dir() { return *dir_; }

 private:
  static inline std::filesystem::path* dir_ = nullptr;
  static inline data::Vocabulary* vocabulary_ = nullptr;
};

inline void write_lines(const std::filesystem::path& path, const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += line + "\n";
  write_file_atomic(path, text);
}

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// The message of the Error that `action` throws, or "(no error)".
inline std::string message_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace attn::testing
