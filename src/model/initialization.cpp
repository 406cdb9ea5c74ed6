#include "model/initialization.h"

#include <cmath>

#include "core/random.h"
#include "core/special_tokens.h"

namespace attn {

void initialize_parameters(const ParameterLayout& layout, const ModelConfig& config, std::uint64_t seed,
                           std::vector<float>& host) {
  host.assign(static_cast<std::size_t>(layout.total()), 0.0f);
  std::uint64_t tensor_index = 0;
  for (const ParameterInfo& t : layout.tensors()) {
    // One stream per tensor: adding a tensor does not change how the others start.
    Random rng(derive_seed(seed, tensor_index++));
    float* p = host.data() + t.offset;
    switch (t.init) {
      case InitKind::Zeros:
        break;
      case InitKind::Ones:
        for (std::int64_t i = 0; i < t.size; ++i) p[i] = 1.0f;
        break;
      case InitKind::XavierUniform: {
        const double a = std::sqrt(6.0 / static_cast<double>(t.fan_in + t.fan_out));
        for (std::int64_t i = 0; i < t.size; ++i) p[i] = static_cast<float>((2 * rng.uniform() - 1) * a);
        break;
      }
      case InitKind::EmbeddingNormal: {
        const double sd = 1.0 / std::sqrt(static_cast<double>(config.d_model));
        for (std::int64_t i = 0; i < t.size; ++i) p[i] = static_cast<float>(rng.normal() * sd);
        break;
      }
    }
  }
  // The padding token embeds to zero.
  const ParameterInfo& e = layout.find("embedding.weight");
  for (int c = 0; c < config.d_model; ++c)
    host[static_cast<std::size_t>(e.offset + static_cast<std::int64_t>(kPadId) * config.d_model + c)] = 0.0f;
}

}  // namespace attn
