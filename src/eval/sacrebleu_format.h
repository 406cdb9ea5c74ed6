#pragma once
// How sacreBLEU writes numbers and signatures.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/number_format.h"

namespace attn::eval {

// The sacreBLEU release whose scores, output lines and signatures this code reproduces; it is the
// "version:" field of every signature.
inline constexpr std::string_view kSacrebleuVersion = "2.5.1";

// Python's f"{value:.{decimals}f}": correctly rounded, ties to even on the exact binary value
// (core/number_format.h).
using attn::format_fixed;

// "nrefs:<n>|<key>:<value>|...|version:<kSacrebleuVersion>", nrefs being "var" for
// kVariableReferenceCount. This is sacreBLEU's Signature.format() for a score computed on plain
// files (no test set, language pair or bootstrap fields).
std::string format_signature(int nrefs, const std::vector<std::pair<std::string, std::string>>& fields);

}  // namespace attn::eval
