#pragma once
// The backends every op test runs on (CTranslate2-style parameterisation): the CPU backend in each
// precision the CPU has (bf16 needs AVX512-BF16; the project's machines have it, and
// Bf16Support.DetectionAgreesWithTheKernelsCpuFlags checks the detection). A CUDA backend adds
// itself here when it exists.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/backend.h"
#include "kernels/cpu/ops.h"

namespace attn::testing {

inline std::vector<Backend*> all_backends() {
  std::vector<Backend*> backends{&cpu_backend()};
  if (cpu::bf16_matmul_supported()) backends.push_back(&cpu_backend(MatmulPrecision::bf16));
  return backends;
}

inline std::string backend_name(const ::testing::TestParamInfo<Backend*>& info) { return info.param->name(); }

}  // namespace attn::testing
