#pragma once
// The activations' side of int8 products (gemm_s8): each row of x quantized on its own to
// levels + 1 unsigned levels, x ≈ scale · (q - zero_point).
//
// How many levels: 255 (8 bits) where oneDNN multiplies with AVX512-VNNI (vpdpbusd adds each
// group of four u8·s8 products straight into 32 bits), 127 (7 bits) elsewhere: with AVX2 or
// AVX-512 but no VNNI (e.g. Zen 3) its u8·s8 product sums pairs of products in 16-bit registers
// (vpmaddubsw), which saturate at 32767: 255·127·2 overflows, 127·127·2 does not. fbgemm
// (PyTorch's reduce_range) makes the same choice for the same reason.
#include <cstdint>

namespace attn::cpu {

// 255 where oneDNN's effective instruction set has AVX512-VNNI, else 127 (decided once).
int activation_levels();

// Per row r of x [rows, cols] (row stride ld): lo = min(0, min x), hi = max(0, max x),
// scale = (hi - lo) / levels (1 if hi = lo), zero_point = round(-lo · (1 / scale)) (half away
// from zero), q = clamp(round_to_even(x · (1 / scale)) + zero_point, 0, levels); q is
// [rows, cols] dense.
void quantize_activation_rows(const float* x, std::int64_t rows, int cols, std::int64_t ld, int levels, std::uint8_t* q,
                              float* scales, std::int32_t* zero_points);

// The same for one row, on the calling thread.
void quantize_activation_row(const float* x, int cols, int levels, std::uint8_t* q, float& scale,
                             std::int32_t& zero_point);

}  // namespace attn::cpu
