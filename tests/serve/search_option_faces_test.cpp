// The same option sets (tests/common/search_option_cases.h) through two faces of the search
// options, each expected to accept or refuse as the table says with the table's message:
// `attn translate` as a user runs it (on the word-reversal model of serve_test.cpp), and a /v1
// request's body as the service reads it (400 "Invalid request: " and the message). The C++ API
// is tried in tests/api/api_test.cpp, Python in tests/python/test_attn.py, the rule itself in
// tests/decode/search_options_test.cpp.
#include <gtest/gtest.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "common/run_attn.h"
#include "common/search_option_cases.h"
#include "common/temp_dir.h"
#include "serve/api_failure.h"
#include "serve/v1_request.h"

namespace attn {
namespace {

using nlohmann::json;

const std::string kModel = std::string(ATTN_SERVE_MODEL_DIR) + "/model";

// As a user would type it: the shortest text that reads back as `value` ("0.5", "nan", "inf").
std::string typed(float value) {
  char buffer[32];
  return std::string(buffer, std::to_chars(buffer, buffer + sizeof buffer, value).ptr);
}

TEST(SearchOptionFaces, TheCommandLineAcceptsAndRefusesAsTheTableSays) {
  const auto dir = testing::fresh_temp_dir("search_option_faces");
  std::ofstream(dir / "in.txt") << "alpha beta gamma\n";
  // The option each field is typed as (the message follows it).
  const std::map<std::string, std::string> flag{{"beam", "--beam"},
                                                {"n_best", "--n-best"},
                                                {"alpha", "--alpha"},
                                                {"max_length_a", "--max-length-a"},
                                                {"max_length_b", "--max-length-b"}};
  for (const testing::SearchOptionCase& c : testing::search_option_cases()) {
    if (!c.on_command_line) continue;
    SCOPED_TRACE(c.name);
    const SearchOptions& s = c.options;
    const std::string arguments = "translate -q -m " + kModel + " -i " + (dir / "in.txt").string() + " -o " +
                                  (dir / "out.txt").string() + " --beam " + std::to_string(s.beam_size) + " --n-best " +
                                  std::to_string(s.n_best) + " --alpha " + typed(s.length_penalty) +
                                  " --max-length-a " + typed(s.max_length_a) + " --max-length-b " +
                                  std::to_string(s.max_length_b);
    const testing::RunResult r = testing::run_attn(arguments, 120);
    if (c.error.empty()) {
      EXPECT_EQ(r.exit_code, 0) << arguments << "\n" << r.output;
      continue;
    }
    EXPECT_EQ(r.exit_code, 1) << arguments << "\n" << r.output;
    const std::string field = c.error.substr(0, c.error.find(' '));
    EXPECT_EQ(r.output, "attn: error: " + flag.at(field) + ": " + c.error + "\n") << arguments;
  }
}

TEST(SearchOptionFaces, V1AcceptsAndRefusesAsTheTableSays) {
  const std::vector<serve::ModelSpec> specs{serve::parse_model_spec("xx-yy=/m")};
  const std::vector<ModelConfig> configs{ModelConfig{}};
  for (const testing::SearchOptionCase& c : testing::search_option_cases()) {
    if (!c.in_json) continue;
    SCOPED_TRACE(c.name);
    const SearchOptions& s = c.options;
    const json request{{"q", "alpha beta gamma"},
                       {"beam", s.beam_size},
                       {"n_best", s.n_best},
                       {"alpha", s.length_penalty},
                       {"max_length_a", s.max_length_a},
                       {"max_length_b", s.max_length_b},
                       {"min_length", s.min_length}};
    serve::TranslateRequest r;
    const std::string failure =
        serve::testing::failure_of([&] { r = serve::read_translate_request(request, specs, configs, {}); });
    if (!c.error.empty()) {
      EXPECT_EQ(failure, "400 Invalid request: " + c.error);
      continue;
    }
    EXPECT_EQ(failure, "(no error)");
    EXPECT_EQ(r.job.search.beam_size, s.beam_size);
    EXPECT_EQ(r.job.search.n_best, s.n_best);  // as asked: never cut down
    EXPECT_EQ(r.job.search.length_penalty, s.length_penalty);
    EXPECT_EQ(r.job.search.max_length_a, s.max_length_a);
    EXPECT_EQ(r.job.search.max_length_b, s.max_length_b);
    EXPECT_EQ(r.job.search.min_length, s.min_length);
  }
}

}  // namespace
}  // namespace attn
