#pragma once
// Which split (train, dev, test) a verse belongs to. The rule looks at the verse's OSIS id only, so
// a verse keeps its split whatever other verses are dropped, whichever modules are joined and
// however often the corpus is rebuilt: h = the first 8 hex digits of sha1(id) read as an integer;
// test if h % 30 == 0, dev if h % 30 == 1, train otherwise (about 1/30 each for dev and test).
#include <cstdint>
#include <string_view>

namespace attn::data {

enum class CorpusSplit { train, dev, test };

// The first 4 bytes of sha1(osis_id), big-endian: the integer the first 8 hex digits spell.
std::uint32_t split_hash(std::string_view osis_id);

CorpusSplit split_of_verse(std::string_view osis_id);

// "train", "dev", "test": also the stem of the corpus files.
std::string_view split_name(CorpusSplit split);

}  // namespace attn::data
