// Reading the files attn bleu scores.
#include "eval/segment_files.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace attn::eval {
namespace {

TEST(SegmentFiles, NoReferenceFileIsRefusedNamingTheHypothesis) {
  try {
    read_reference_files({}, "hyp.txt", 3);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("scoring hyp.txt needs at least one reference file"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace attn::eval
