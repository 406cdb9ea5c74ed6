// The checks that the options of `attn align` go together, and the --head values.
#include "inspect/alignment_request.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "inspect/attention_record.h"

namespace attn::inspect {
namespace {

std::string problem(const AlignmentRequest& request) {
  try {
    check_alignment_request(request);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

AlignmentRequest from_attention() {
  AlignmentRequest r;
  r.attention = "a.jsonl";
  return r;
}

TEST(AlignmentRequest, ExactlyOneInput) {
  const std::string one_of =
      "give exactly one of --model DIR, --attention FILE, --baseline diagonal|ibm1, or --gold GOLD --alignment FILE...";
  EXPECT_EQ(problem({}), one_of);
  AlignmentRequest two = from_attention();
  two.baseline = "diagonal";
  EXPECT_EQ(problem(two), one_of);
  EXPECT_EQ(problem(from_attention()), "");
}

TEST(AlignmentRequest, WhatEachInputNeeds) {
  AlignmentRequest model;
  model.model = "dir";
  model.source = "s.txt";
  EXPECT_EQ(problem(model), "--model needs --source and --target (the sentence pairs to align)");
  model.target = "t.txt";
  EXPECT_EQ(problem(model), "");

  AlignmentRequest files;
  files.alignments = {"w.txt"};
  EXPECT_EQ(problem(files), "--alignment needs --gold");
  files.gold = "gold.txt";
  EXPECT_EQ(problem(files), "");
  files.sweep = true;
  EXPECT_EQ(problem(files), "--sweep needs --attention or --model, and --gold");

  AlignmentRequest sweep = from_attention();
  sweep.sweep = true;
  EXPECT_EQ(problem(sweep), "--sweep needs --attention or --model, and --gold");
  sweep.gold = "gold.txt";
  EXPECT_EQ(problem(sweep), "");
}

TEST(AlignmentRequest, OptionsThatApplyToOtherInputs) {
  AlignmentRequest r = from_attention();
  r.gold_tagged = "gold.tagged";
  EXPECT_EQ(problem(r), "--gold-tagged needs --gold");
  r = from_attention();
  r.json = true;
  EXPECT_EQ(problem(r), "--json applies to scores: give --gold");

  AlignmentRequest baseline;
  baseline.baseline = "ibm1";
  baseline.head = std::string("0");  // not = "0": GCC 12 warns wrongly (-Wrestrict) on that assignment
  EXPECT_EQ(problem(baseline), "--layer, --head and --threshold apply to --attention and --model");
  baseline.head = "mean";
  baseline.threshold = 0.5;
  EXPECT_EQ(problem(baseline), "--layer, --head and --threshold apply to --attention and --model");

  r = from_attention();
  r.source = "s.txt";
  EXPECT_EQ(problem(r), "--source and --target apply to --model and --baseline");
  r = from_attention();
  r.train_target = "t.txt";
  EXPECT_EQ(problem(r), "--train-source and --train-target apply to --baseline ibm1");
  AlignmentRequest diagonal;
  diagonal.baseline = "diagonal";
  diagonal.train_source = "s.txt";
  EXPECT_EQ(problem(diagonal),
            "the diagonal baseline learns nothing: --train-source and --train-target apply to --baseline ibm1");
}

TEST(AlignmentRequest, Heads) {
  EXPECT_EQ(parse_alignment_head("mean"), kMeanOfHeads);
  EXPECT_EQ(parse_alignment_head("0"), 0);
  EXPECT_EQ(parse_alignment_head("12"), 12);
  for (const char* bad : {"", "-1", "x", "1.5", "1234567890"}) {
    try {
      parse_alignment_head(bad);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("--head: expected a head number (0, 1, ...) or 'mean', not '") + bad + "'");
    }
  }
}

}  // namespace
}  // namespace attn::inspect
