// The one rule of the search options (decode/search_options.h) that every face applies, on the
// table of tests/common/search_option_cases.h; and the key that tells two sets of options apart.
#include "decode/search_options.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/search_option_cases.h"
#include "core/error.h"

namespace attn {
namespace {

TEST(SearchOptionsRule, EachCaseIsAcceptedOrRefusedWithItsMessage) {
  for (const testing::SearchOptionCase& c : testing::search_option_cases()) {
    SCOPED_TRACE(c.name);
    const auto problem = check(c.options);
    if (c.error.empty()) {
      EXPECT_FALSE(problem) << problem->message;
      EXPECT_NO_THROW(validate(c.options));
      continue;
    }
    ASSERT_TRUE(problem);
    EXPECT_EQ(problem->message, c.error);
    EXPECT_EQ(problem->message.rfind(problem->field, 0), 0u) << "the message starts with the field's name";
    try {
      validate(c.options);
      ADD_FAILURE() << "validate accepted what check refuses";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), c.error);
      EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(ErrorKind::invalid_argument));
    }
  }
}

TEST(SearchOptionsRule, TheLimitsAreTheDocumentedOnes) {
  EXPECT_EQ(kMaxBeam, 128);
  EXPECT_EQ(kMaxAlpha, 10.0f);
  EXPECT_EQ(kMaxLengthA, 1000.0f);
  EXPECT_EQ(kMaxLength, 1048576);
}

TEST(SearchOptionsKey, EqualExactlyWhenEveryFieldIs) {
  const SearchOptions base;
  EXPECT_EQ(cache_key(base), cache_key(SearchOptions{}));
  std::vector<SearchOptions> changed(7, base);
  changed[0].beam_size = 5;
  changed[1].length_penalty = std::nextafter(base.length_penalty, 1.0f);  // the last bit counts
  changed[2].max_length_a = 2;
  changed[3].max_length_b = 51;
  changed[4].min_length = 1;
  changed[5].n_best = 2;
  changed[6].early_stop = false;
  for (std::size_t i = 0; i < changed.size(); ++i) {
    EXPECT_NE(cache_key(changed[i]), cache_key(base)) << "field " << i;
    for (std::size_t j = 0; j < i; ++j) EXPECT_NE(cache_key(changed[i]), cache_key(changed[j])) << i << " " << j;
  }
}

}  // namespace
}  // namespace attn
