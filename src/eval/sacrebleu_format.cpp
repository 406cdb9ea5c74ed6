#include "eval/sacrebleu_format.h"

#include <charconv>

#include "core/error.h"
#include "eval/reference_sets.h"

namespace attn::eval {

std::string format_signature(int nrefs, const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string signature = "nrefs:";
  signature += nrefs == kVariableReferenceCount ? std::string("var") : std::to_string(nrefs);
  for (const auto& [key, value] : fields) {
    signature += '|';
    signature += key;
    signature += ':';
    signature += value;
  }
  signature += "|version:";
  signature += kSacrebleuVersion;
  return signature;
}

}  // namespace attn::eval
