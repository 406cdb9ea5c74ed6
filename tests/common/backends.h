#pragma once
// The backends every op test runs on (CTranslate2-style parameterisation). A CUDA backend adds
// itself here when it exists.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/backend.h"

namespace attn::testing {

inline std::vector<Backend*> all_backends() { return {&cpu_backend()}; }

inline std::string backend_name(const ::testing::TestParamInfo<Backend*>& info) { return info.param->name(); }

}  // namespace attn::testing
