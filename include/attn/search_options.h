#pragma once
// How translations are searched for. Defaults are the paper's (section 6.1): beam 4, length
// penalty α = 0.6, maximum output length = input length + 50.
namespace attn {

struct SearchOptions {
  int beam_size = 4;  // 1 = greedy
  // α of GNMT's length penalty (Wu et al., 2016): a hypothesis Y with log-probability log P(Y)
  // scores log P(Y) / lp(Y), lp(Y) = ((5 + |Y|) / 6)^α, |Y| counting its tokens and the EOS.
  float length_penalty = 0.6f;
  float max_length_a = 1.0f;  // maximum output tokens = a · (source tokens) + b
  int max_length_b = 50;
  int min_length = 0;      // EOS is not allowed before this many output tokens (EOS included)
  int n_best = 1;          // hypotheses returned per sentence (<= beam_size)
  bool early_stop = true;  // stop once no live hypothesis can beat the n-th best finished one
};

}  // namespace attn
