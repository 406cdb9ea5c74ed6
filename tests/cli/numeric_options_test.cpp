// Every numeric option of the commands refuses values that make no sense with a clear error
// naming the option, at once: no silent empty output, no run that never returns (issue 20: `attn
// score --batch-sentences 0` used to hang; `attn translate --max-length-b -100` printed nothing).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/run_attn.h"

namespace attn {
namespace {

TEST(NumericOptions, NonsenseValuesAreRefusedNamingTheOption) {
  const std::string m = "-m /nonexistent/model";
  const std::vector<std::pair<std::string, std::string>> cases{
      {"translate " + m + " --batch-tokens 0", "--batch-tokens"},
      {"translate " + m + " --batch-tokens -5", "--batch-tokens"},
      {"translate " + m + " --max-batch-sentences 0", "--max-batch-sentences"},
      {"translate " + m + " --max-input-tokens -1", "--max-input-tokens"},
      {"translate " + m + " --threads -1", "--threads"},
      {"translate " + m + " --alpha -1", "--alpha"},
      {"translate " + m + " --alpha nan", "--alpha"},
      {"translate " + m + " --alpha inf", "--alpha"},
      {"translate " + m + " --max-length-a -1", "--max-length-a"},
      {"translate " + m + " --max-length-b -100", "--max-length-b"},
      {"translate " + m + " --max-length-a 0 --max-length-b 0", "--max-length-a: max_length_a 0 and max_length_b 0"},
      {"translate " + m + " --beam 0", "--beam"},
      {"translate " + m + " --n-best 0", "--n-best"},
      {"translate " + m + " --alignment-threshold nan", "--alignment-threshold"},
      {"translate " + m + " --alignment-threshold 2", "--alignment-threshold"},
      {"score " + m + " -s a -t b --batch-sentences 0", "--batch-sentences"},
      {"align --threshold -1", "--threshold"},
      {"align --threshold nan", "--threshold"},
      {"report --run x --sample-count -1", "--sample-count"},
      {"bleu a b --width -1", "--width"},
      {"bleu a b --chrf-word-order -1", "--chrf-word-order"},
      {"average --last 0", "--last"},
      {"vocab train --input a --model b --size 0", "--size"},
      {"serve " + m.substr(0, 2) + " en-es=/nonexistent --port 70000", "--port"},
      {"serve -m en-es=/nonexistent --batch-tokens 0", "--batch-tokens"},
      {"serve -m en-es=/nonexistent --timeout 0", "--timeout"},
      {"serve -m en-es=/nonexistent --timeout nan", "--timeout"},
      {"serve -m en-es=/nonexistent --read-timeout nan", "--read-timeout"},
      {"heatmap --attention a --out b --scale nan", "--scale"},
      {"heatmap --attention a --out b --cutoff nan", "--cutoff"},
      {"train --batch-tokens 0 --train-source a --train-target b --vocabulary v", "batch_tokens"},
      {"train --lr-scale nan --train-source a --train-target b --vocabulary v", "--lr-scale"},
      {"shortlist build " + m + " --train-source a --train-target b -o c --per-source 0", "--per-source"},
      {"shortlist build " + m + " --train-source a --train-target b -o c --frequent -1", "--frequent"},
      {"shortlist build " + m + " --train-source a --train-target b -o c --method attention --layer -1", "--layer"},
      {"shortlist build " + m + " --train-source a --train-target b -o c --method attention --batch-sentences 0",
       "--batch-sentences"},
      {"shortlist build " + m + " --train-source a --train-target b -o c --method nearest", "--method"},
  };
  for (const auto& [arguments, option] : cases) {
    // Under a 30 s timeout, so that a hang fails the test instead of stalling it.
    const testing::RunResult o = testing::run_attn(arguments, 30);
    EXPECT_NE(o.exit_code, 0) << arguments << ": " << o.output;
    EXPECT_NE(o.exit_code, 124) << arguments << ": did not return within 30 s";
    EXPECT_NE(o.output.find(option), std::string::npos) << arguments << ": " << o.output;
  }
}

}  // namespace
}  // namespace attn
