#pragma once
// A lexical shortlist for the output layer (Marian's --shortlist, CTranslate2's vocabulary map):
// for every source piece, the target pieces most likely to translate it, and the most frequent
// target pieces. A batch is decoded over the union of its sources' lists, the frequent pieces and
// the special tokens only, so the output layer and the log-softmax shrink from the vocabulary to a
// few hundred rows. The file format is docs/shortlist.md.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "data/vocabulary.h"

namespace attn {

// Candidates per source piece a translation takes from a shortlist unless told otherwise: on the
// main job's model, 25, 50, 100 and 200 all matched the full vocabulary's dev BLEU (docs/shortlist.md);
// 50 keeps a margin over 25 at nearly its speed.
inline constexpr int kDefaultShortlistK = 50;

// A batch's list is padded to a multiple of this many pieces: every width is then one of a few, so
// the products whose kernels are compiled per shape (oneDNN's int8 and bf16 matmul primitives,
// kept in a cache) reuse them from batch to batch instead of compiling one per batch and row count.
inline constexpr int kShortlistWidthMultiple = 256;

// Where t(target | source) comes from: IBM Model 1 over the pieces of the parallel text, or the
// model's own cross-attention over them (decode/shortlist_attention.h).
enum class ShortlistMethod { ibm1, attention };

struct ShortlistOptions {
  int per_source = 100;  // candidates kept per source piece (the k a translation may use is at most this)
  int frequent = 100;    // most frequent target pieces, always in the list
  int iterations = 5;    // ibm1: EM iterations of IBM Model 1 over the pieces
  ShortlistMethod method = ShortlistMethod::ibm1;
  int attention_layer = -1;  // attention: the decoder layer read (mean of its heads); -1: the last
};

// Throws Error unless per_source >= 1, frequent >= 0 and iterations >= 0.
void check_shortlist_options(const ShortlistOptions& options);

struct ShortlistCandidate {
  std::int32_t target = 0;
  float probability = 0;  // t(target | source)
};

// t(target | source) for each source id (outer index), in any order; absent pairs are 0.
using LexicalTable = std::vector<std::vector<ShortlistCandidate>>;

class Shortlist {
 public:
  // From tokenised parallel text (ids without EOS): IBM Model 1's t(target | source) over the
  // pieces, each source piece's candidates by descending t (ties: lower id first), and the target
  // pieces by descending count (ties: lower id first).
  static Shortlist build(const data::Vocabulary& vocabulary, const std::vector<std::vector<std::int32_t>>& source,
                         const std::vector<std::vector<std::int32_t>>& target, const ShortlistOptions& options);
  // From any lexical table (one list per vocabulary id; probabilities in (0, 1], ids in the
  // vocabulary, else Error): each list sorted by descending t (ties: lower id first) and cut to
  // options.per_source; the frequent pieces counted in `target` (ids without EOS) as build does.
  static Shortlist from_table(const data::Vocabulary& vocabulary, const std::vector<std::vector<std::int32_t>>& target,
                              LexicalTable table, const ShortlistOptions& options);

  // Reads a file `save` wrote; throws Error naming the file (and line) if it is not one, is
  // corrupt (its checksum does not match) or was built for another vocabulary than `vocabulary`.
  static Shortlist load(const std::filesystem::path& path, const data::Vocabulary& vocabulary);
  void save(const std::filesystem::path& path) const;  // atomically

  // The output ids for a batch: the special tokens, the frequent pieces and the first k
  // candidates of every source piece; ascending, distinct. k is capped at per_source(). With
  // width_multiple > 1 the list is then padded to a multiple of it (or to the whole vocabulary):
  // first with the sources' next candidates (every piece's (k+1)-th in source order, then every
  // (k+2)-th, ...), then, were those to run out, with the lowest ids not yet in.
  std::vector<std::int32_t> select(const std::vector<std::vector<std::int32_t>>& sources, int k,
                                   int width_multiple = 1) const;

  const std::vector<ShortlistCandidate>& candidates(std::int32_t source) const;
  const std::vector<std::int32_t>& frequent() const { return frequent_; }
  const ShortlistOptions& options() const { return options_; }
  std::int32_t vocabulary_size() const { return static_cast<std::int32_t>(candidates_.size()); }

 private:
  ShortlistOptions options_;
  std::string vocabulary_fingerprint_;
  std::vector<std::int32_t> frequent_;
  std::vector<std::vector<ShortlistCandidate>> candidates_;  // per source id
};

// The sentence pairs of two parallel text files (UTF-8, one sentence per line, as many lines in
// each), tokenised with `vocabulary` (ids without EOS); pairs with a blank side are skipped. Throws
// Error naming the file (and line) that cannot be read, the two files' line counts, or no pair left.
struct TokenisedPairs {
  std::vector<std::vector<std::int32_t>> source, target;
};
TokenisedPairs read_parallel_text(const data::Vocabulary& vocabulary, const std::filesystem::path& source,
                                  const std::filesystem::path& target);

// Shortlist::build (IBM Model 1) from parallel text files, read by read_parallel_text.
Shortlist build_shortlist(const data::Vocabulary& vocabulary, const std::filesystem::path& source,
                          const std::filesystem::path& target, const ShortlistOptions& options);

// Which vocabulary a shortlist belongs to: SHA-256 of its pieces in id order, one per line.
std::string vocabulary_fingerprint(const data::Vocabulary& vocabulary);

}  // namespace attn
