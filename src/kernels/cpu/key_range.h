#pragma once
// The keys a query may attend to, as one range [lo, hi): keys at or beyond the sentence's length
// are padding, a causal mask cuts the keys after the query, and restricted self-attention (a
// window r > 0) those further than r from it. attention_softmax and cached_attention both take it
// from here, so that their masks cannot disagree.
#include <algorithm>

namespace attn::cpu {

struct KeyRange {
  int lo = 0, hi = 0;
  bool empty() const { return lo >= hi; }
};

// keys: the positions there are; valid_keys: the sentence's (the rest is padding); position: the
// query's position; window 0: unrestricted.
inline KeyRange key_range(int keys, int valid_keys, int position, bool causal, int window) {
  KeyRange r{0, std::min(keys, valid_keys)};
  if (causal) r.hi = std::min(r.hi, position + 1);
  if (window > 0) {
    r.lo = std::max(0, position - window);
    r.hi = std::min(r.hi, position + window + 1);
  }
  return r;
}

}  // namespace attn::cpu
