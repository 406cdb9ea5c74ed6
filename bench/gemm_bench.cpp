// Benchmark: the training step's matrix products, through the two float32 routes oneDNN offers here.
//   gemm_bench [--rows N] [--sentences N] [D_MODEL D_FF]...
// What it measures is kAbout below (gemm_bench --help prints it). Decides kernels/cpu/gemm.cpp's
// choice of route per layout.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_cli.h"
#include "kernels/backend.h"
#include "kernels/device_buffer.h"
#include "kernels/cpu/matmul_primitive.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/small_product.h"

#include <dnnl.h>

namespace {

const char* const kAbout =
    R"(gemm_bench: the training step's matrix products, through the two float32 routes oneDNN offers
here: sgemm (dnnl_sgemm) and the matmul primitive (its brgemm kernel). The median of 7 runs.
Sizes: each D_MODEL D_FF pair given, default 256 1024 (small) and 512 2048 (base); --rows rows
(a batch's tokens; 1024 for the cpu-hour preset), vocabulary 8000.
Then a decoding step's x·Wᵀ (32 and 128 rows): directly, transposed, as oneDNN's matmul and as
gemm() routes it; and attention's batched per-(sentence, head) products (--sentences sentences × 32
tokens, d_k 64; 32 is the cpu-hour step's): the AVX-512 small-block kernel against oneDNN's batched
matmul, and the fused attention kernel forward and backward (in bf16 also with its operands in
memory, as the step has them). Last, a decoding step's cached
attention at beam 4 over --sentences sentences (self-attention at 20 and 40 positions, cross-attention
over 32 shared by a sentence's hypotheses), its caches read from memory: microseconds a call and
the cache's bytes a second.)";

double seconds() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

struct Shape {
  int m, n, k;
  bool ta, tb;
};

// The median of 7 runs of `run` after one that warms up (JIT, first touch); `before` runs untimed
// before each.
template <typename F, typename B = void (*)()>
double median_seconds(
    F&& run, B&& before = [] {}) {
  run();  // warm-up: JIT, first touch
  std::vector<double> t;
  for (int i = 0; i < 7; ++i) {
    before();
    const double start = seconds();
    run();
    t.push_back(seconds() - start);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Runs `run` from memory: the median_seconds of it with 64 MB read before each run (not timed).
template <typename F>
double median_seconds_cold(F&& run) {
  static std::vector<float> flush(std::size_t{16} << 20, 1.0f);
  float sink = 0;
  const double seconds = median_seconds(run, [&] {
    for (std::size_t j = 0; j < flush.size(); j += 16) sink += flush[j];
  });
  if (sink < 0) std::printf(" ");  // keeps the reads
  return seconds;
}

// A decoding step's attention over its cached keys and values (Backend::cached_attention) at beam 4
// over `sentences` sentences: self-attention at 20 and 40 positions (each hypothesis its own
// history, the table per position as the decoder keeps it) and cross-attention over 32 source
// positions that a sentence's four hypotheses share (one cached row for all). The caches are cycled
// over copies of together at least 96 MB, so that each call reads them from memory as a step's
// calls do (the caches of all layers outgrow L3), on 2 MB pages as the backend allocates them.
void cached_attention_probe(int d, int sentences) {
  attn::Backend& backend = attn::cpu_backend();
  const int beam = 4, rows = sentences * beam, dk = 64, heads = d / dk, kv_width = 2 * d;
  std::vector<float> q(static_cast<std::size_t>(rows) * d, 0.01f), ctx(q.size());
  struct Case {
    const char* name;
    int keys;
    bool shared;
  };
  for (const Case c : {Case{"self", 20, false}, Case{"self", 40, false}, Case{"cross", 32, true}}) {
    const int cached_rows = c.shared ? sentences : rows;
    const std::size_t floats = static_cast<std::size_t>(cached_rows) * c.keys * kv_width;
    const std::size_t copies = std::max<std::size_t>(2, (std::size_t{96} << 20) / (floats * sizeof(float)) + 1);
    std::vector<attn::DeviceBuffer<float>> caches;
    for (std::size_t i = 0; i < copies; ++i) {
      caches.emplace_back(backend, floats);
      for (std::size_t j = 0; j < floats; ++j) caches.back().data()[j] = 0.001f * static_cast<float>(j % 97);
    }
    // The decoder's tables: per position (stride = keys) for self-attention, one entry a row for
    // the source's memory.
    std::vector<std::int32_t> rows_of(c.shared ? rows : static_cast<std::size_t>(rows) * c.keys);
    for (int r = 0; r < rows; ++r)
      if (c.shared)
        rows_of[r] = r / beam;
      else
        std::fill_n(rows_of.begin() + static_cast<std::ptrdiff_t>(r) * c.keys, c.keys, r);
    std::vector<float> probs(static_cast<std::size_t>(rows) * heads * c.keys);
    attn::CachedAttention a;
    a.rows = rows, a.heads = heads, a.d_k = dk, a.d_v = dk, a.q = q.data(), a.ld_q = d;
    a.row_stride = static_cast<std::int64_t>(c.keys) * kv_width, a.ld_cache = kv_width;
    a.rows_of = rows_of.data(), a.rows_of_stride = c.shared ? 0 : c.keys, a.keys = c.keys;
    a.query_position = c.keys - 1;
    std::size_t next = 0;
    const int calls = 20;
    const double seconds = median_seconds([&] {
                             for (int i = 0; i < calls; ++i) {
                               a.cache = caches[next++ % copies].data();
                               attn::cpu::cached_attention(a, probs.data(), ctx.data());
                             }
                           }) /
                           calls;
    const double bytes = static_cast<double>(floats) * sizeof(float);
    std::printf("cached attention %-5s %d rows (beam %d) x %d heads, %d positions  %6.1f us  %5.1f GB/s of the cache\n",
                c.name, rows, beam, heads, c.keys, seconds * 1e6, bytes / seconds / 1e9);
  }
}

int run(std::vector<std::pair<int, int>> sizes, int rows, int sentences) {
  const int vocab = 8000;
  for (auto [d, ff] : sizes) {
    // Forward x·Wᵀ (NT), backward dy·W (NN) and dyᵀ·x (TN) for each layer kind.
    const std::vector<Shape> shapes{
        {rows, ff, d, false, true},    {rows, d, ff, false, true},    {rows, d, d, false, true},
        {rows, 3 * d, d, false, true}, {rows, vocab, d, false, true}, {rows, d, ff, false, false},
        {rows, ff, d, false, false},   {rows, d, d, false, false},    {rows, d, vocab, false, false},
        {ff, d, rows, true, false},    {d, ff, rows, true, false},    {d, d, rows, true, false},
        {vocab, d, rows, true, false}};
    for (const Shape& s : shapes) {
      const int a_cols = s.ta ? s.m : s.k, b_cols = s.tb ? s.k : s.n;
      std::vector<float> a(static_cast<std::size_t>(s.m) * s.k, 0.5f), b(static_cast<std::size_t>(s.k) * s.n, 0.25f),
          c(static_cast<std::size_t>(s.m) * s.n);
      const auto desc =
          attn::cpu::matmul_desc(attn::Trans{s.ta}, attn::Trans{s.tb}, s.m, s.n, s.k, a_cols, b_cols, s.n, 1.0f, 0.0f);
      const double sgemm = median_seconds([&] {
        dnnl_sgemm(s.ta ? 'T' : 'N', s.tb ? 'T' : 'N', s.m, s.n, s.k, 1.0f, a.data(), a_cols, b.data(), b_cols, 0.0f,
                   c.data(), s.n);
      });
      const double matmul = median_seconds([&] { attn::cpu::run_matmul(desc, a.data(), b.data(), c.data()); });
      const double flop = 2.0 * s.m * s.n * s.k;
      std::printf("gemm %c%c %5dx%5dx%5d  sgemm %4.0f GFLOP/s  matmul %4.0f GFLOP/s", s.ta ? 'T' : 'N',
                  s.tb ? 'T' : 'N', s.m, s.n, s.k, flop / sgemm / 1e9, flop / matmul / 1e9);
      if (attn::cpu::bf16_matmul_supported()) {
        // bf16: converting both operands on the way in (gemm_mixed of two float operands) against
        // operands already in bf16.
        std::vector<attn::Bf16> a16(a.size()), b16(b.size());
        const double convert = median_seconds([&] {
          attn::cpu::to_bf16(a.data(), static_cast<std::int64_t>(a.size()), a16.data());
          attn::cpu::to_bf16(b.data(), static_cast<std::int64_t>(b.size()), b16.data());
        });
        const double converting = median_seconds([&] {
          attn::cpu::gemm_mixed(s.m, s.n, s.k, 1.0f, attn::f32_matrix(a.data(), a_cols, attn::Trans{s.ta}),
                                attn::f32_matrix(b.data(), b_cols, attn::Trans{s.tb}), 0.0f, c.data(), s.n);
        });
        auto desc16 = desc;
        desc16.input = attn::cpu::MatmulInput::bf16;
        const double in_place =
            median_seconds([&] { attn::cpu::run_matmul(desc16, a16.data(), b16.data(), c.data()); });
        std::printf("  bf16 converting %4.0f, operands in bf16 %4.0f GFLOP/s, conversion %.2f ms",
                    flop / converting / 1e9, flop / in_place / 1e9, convert * 1e3);
      }
      std::printf("\n");
    }
    // A decoding step at batch 8 and 32 (32 and 128 rows at beam 4) through each layer, x·Wᵀ: as
    // sgemm computes it directly, as its transpose W·xᵀ (no copy back), as oneDNN's brgemm matmul
    // runs it, and as gemm() runs it (kernels/cpu/gemm.cpp picks the matmul for these rows).
    for (const int m : {32, 128})
      for (const auto& [n, k] :
           {std::pair{3 * d, d}, std::pair{d, d}, std::pair{ff, d}, std::pair{d, ff}, std::pair{vocab, d}}) {
        std::vector<float> x(static_cast<std::size_t>(m) * k, 0.5f), w(static_cast<std::size_t>(n) * k, 0.25f),
            y(static_cast<std::size_t>(m) * n);
        const double direct =
            median_seconds([&] { dnnl_sgemm('N', 'T', m, n, k, 1.0f, x.data(), k, w.data(), k, 0.0f, y.data(), n); });
        const double transposed =
            median_seconds([&] { dnnl_sgemm('N', 'T', n, m, k, 1.0f, w.data(), k, x.data(), k, 0.0f, y.data(), m); });
        const auto desc = attn::cpu::matmul_desc(attn::Trans::No, attn::Trans::Yes, m, n, k, k, k, n, 1.0f, 0.0f);
        const double matmul = median_seconds([&] { attn::cpu::run_matmul(desc, x.data(), w.data(), y.data()); });
        const double routed = median_seconds([&] {
          attn::cpu::gemm(attn::Trans::No, attn::Trans::Yes, m, n, k, 1.0f, x.data(), k, w.data(), k, 0.0f, y.data(),
                          n);
        });
        const double flop = 2.0 * m * n * k;
        std::printf("decode NT %5dx%5dx%5d  direct %4.0f GFLOP/s  transposed %4.0f  matmul %4.0f  gemm() %4.0f\n", m, n,
                    k, flop / direct / 1e9, flop / transposed / 1e9, flop / matmul / 1e9, flop / routed / 1e9);
      }
    // A decoding step at batch 1: 1 to 8 rows (greedy, beam 4, beam 8) through each layer kind,
    // x·Wᵀ, as sgemm computes it and as gemm() runs it.
    for (const int m : {1, 4, 8})
      for (const auto& [n, k] :
           {std::pair{3 * d, d}, std::pair{d, d}, std::pair{ff, d}, std::pair{d, ff}, std::pair{vocab, d}}) {
        std::vector<float> x(static_cast<std::size_t>(m) * k, 0.5f), w(static_cast<std::size_t>(n) * k, 0.25f),
            y(static_cast<std::size_t>(m) * n);
        const int reps = 100;  // microseconds each: a median of 100-call runs
        const double direct = median_seconds([&] {
                                for (int r = 0; r < reps; ++r)
                                  dnnl_sgemm('N', 'T', m, n, k, 1.0f, x.data(), k, w.data(), k, 0.0f, y.data(), n);
                              }) /
                              reps;
        const double routed = median_seconds([&] {
                                for (int r = 0; r < reps; ++r)
                                  attn::cpu::gemm(attn::Trans::No, attn::Trans::Yes, m, n, k, 1.0f, x.data(), k,
                                                  w.data(), k, 0.0f, y.data(), n);
                              }) /
                              reps;
        const double flop = 2.0 * m * n * k;
        std::printf("few rows NT %2dx%5dx%5d  sgemm %6.1f us %4.0f GFLOP/s  gemm() %6.1f us %4.0f GFLOP/s\n", m, n, k,
                    direct * 1e6, flop / direct / 1e9, routed * 1e6, flop / routed / 1e9);
      }
    // Scores Q·Kᵀ (NT) and context P·V (NN) over [B·T, H·64] rows, H = d_model / 64.
    const int B = sentences, T = 32, dk = 64, H = d / dk, hd = H * dk;
    const std::int64_t block = T * T;
    std::vector<float> q(static_cast<std::size_t>(B) * T * hd, 0.5f), k(q.size(), 0.25f), ctx(q.size()),
        probs(static_cast<std::size_t>(B) * H * block, 0.125f);
    for (bool scores : {true, false}) {
      // Q [B·T, hd] · K [B·T, hd]ᵀ → probs [B, H, T, T]; probs · V [B·T, hd] → ctx [B·T, hd].
      const int n = scores ? T : dk, kk = scores ? dk : T, lda = scores ? hd : T, ldc = scores ? T : hd;
      const attn::GemmBatch batch = scores ? attn::GemmBatch{B, H, T * hd, dk, T * hd, dk, H * block, block}
                                           : attn::GemmBatch{B, H, H * block, block, T * hd, dk, T * hd, dk};
      const attn::Trans tb = scores ? attn::Trans::Yes : attn::Trans::No;
      auto desc = attn::cpu::matmul_desc(attn::Trans::No, tb, T, n, kk, lda, hd, ldc, 1.0f, 0.0f);
      desc.outer = B, desc.inner = H;
      desc.a_outer = batch.a_outer, desc.a_inner = batch.a_inner, desc.b_outer = batch.b_outer;
      desc.b_inner = batch.b_inner, desc.c_outer = batch.c_outer, desc.c_inner = batch.c_inner;
      const float* a = scores ? q.data() : probs.data();
      const float* b = scores ? k.data() : q.data();
      float* c = scores ? probs.data() : ctx.data();
      const double small = median_seconds([&] {
        attn::cpu::small_gemm_batched(T, n, kk, 1.0f, attn::f32_matrix(a, lda), attn::f32_matrix(b, hd, tb), 0.0f, c,
                                      ldc, batch);
      });
      const double matmul = median_seconds([&] { attn::cpu::run_matmul(desc, a, b, c); });
      // In bf16 as training runs it: Q, K, V kept in bf16, the probabilities float.
      std::vector<attn::Bf16> q16(q.size());
      attn::cpu::to_bf16(q.data(), static_cast<std::int64_t>(q.size()), q16.data());
      const bool a16 = scores;
      const double bf16 = median_seconds([&] {
        attn::cpu::small_gemm_batched_bf16(T, n, kk, 1.0f,
                                           a16 ? attn::bf16_matrix(q16.data(), lda) : attn::f32_matrix(a, lda),
                                           attn::bf16_matrix(q16.data(), hd, tb), 0.0f, c, ldc, batch);
      });
      const double flop = 2.0 * B * H * T * T * dk;
      std::printf(
          "batched %s %dx%d blocks of %dx%dx%d  small-block %4.0f GFLOP/s  matmul %4.0f GFLOP/s  small-block bf16 "
          "%4.0f GFLOP/s\n",
          scores ? "NT" : "NN", B, H, desc.m, desc.n, desc.k, flop / small / 1e9, flop / matmul / 1e9,
          flop / bf16 / 1e9);
    }
    // Fused attention (Backend::attention and attention_backward) as self-attention in training calls
    // it: Q, K and V side by side in rows [B·T, 3·hd], kept in bf16 under precision bf16.
    for (const auto precision : {attn::MatmulPrecision::fp32, attn::MatmulPrecision::bf16}) {
      if (precision == attn::MatmulPrecision::bf16 && !attn::cpu::bf16_matmul_supported()) continue;
      const bool in_bf16 = precision == attn::MatmulPrecision::bf16;
      std::vector<float> qkv(static_cast<std::size_t>(B) * T * 3 * hd), dqkv(qkv.size());
      for (std::size_t i = 0; i < qkv.size(); ++i) qkv[i] = 0.01f * static_cast<float>(i % 97) - 0.5f;
      std::vector<attn::Bf16> qkv16(qkv.size());
      attn::cpu::to_bf16(qkv.data(), static_cast<std::int64_t>(qkv.size()), qkv16.data());
      std::vector<float> dprobs(probs.size()), dctx(ctx.size(), 0.01f);
      attn::AttentionBlocks a;
      a.batch = B, a.heads = H, a.d_k = dk, a.d_v = dk, a.queries = T, a.keys = T;
      const attn::MatrixRef rows =
          in_bf16 ? attn::bf16_matrix(qkv16.data(), 3 * hd) : attn::f32_matrix(qkv.data(), 3 * hd);
      a.q = rows, a.k = attn::cpu::advanced(rows, hd), a.v = attn::cpu::advanced(rows, 2 * hd);
      a.q_stride = a.k_stride = a.v_stride = static_cast<std::int64_t>(T) * 3 * hd;
      const double forward = median_seconds(
          [&] { attn::cpu::attention(precision, a, attn::AttentionMask{}, probs.data(), ctx.data(), nullptr); });
      const double backward = median_seconds([&] {
        attn::cpu::attention_backward(precision, a, probs.data(), dctx.data(), dprobs.data(), dqkv.data(),
                                      dqkv.data() + hd, dqkv.data() + 2 * hd, nullptr);
      });
      const double flop = 2.0 * B * H * T * T * (2 * dk);
      std::printf("attention %s %dx%d blocks of %dx%dx%d  fused forward %4.0f GFLOP/s  backward %4.0f GFLOP/s",
                  attn::to_string(precision).c_str(), B, H, T, T, dk, flop / forward / 1e9, 2 * flop / backward / 1e9);
      if (in_bf16) {
        // As the bf16 training step calls them: the context and the gradients rounded in the block
        // (ctx_rounded; RoundedAttentionGradients with the QKV biases' sums), ∂ctx read in bf16.
        std::vector<attn::Bf16> ctx16(ctx.size()), dqkv16(qkv.size()), dctx16(dctx.size());
        attn::cpu::to_bf16(dctx.data(), static_cast<std::int64_t>(dctx.size()), dctx16.data());
        std::vector<float> bias(static_cast<std::size_t>(3) * hd);
        const attn::RoundedAttentionGradients rounded{dqkv16.data(), dqkv16.data() + hd, dqkv16.data() + 2 * hd,
                                                      bias.data(),   bias.data() + hd,   bias.data() + 2 * hd,
                                                      dctx16.data()};
        const double forward16 = median_seconds(
            [&] { attn::cpu::attention(precision, a, attn::AttentionMask{}, probs.data(), ctx.data(), ctx16.data()); });
        const double backward16 = median_seconds([&] {
          attn::cpu::attention_backward(precision, a, probs.data(), dctx.data(), dprobs.data(), dqkv.data(),
                                        dqkv.data() + hd, dqkv.data() + 2 * hd, &rounded);
        });
        std::printf("  rounded as training: forward %4.0f GFLOP/s  backward %4.0f GFLOP/s", flop / forward16 / 1e9,
                    2 * flop / backward16 / 1e9);
        // The same with the operands in memory, as the step has them (a layer's backward pass reads
        // what its forward pass wrote long before): 64 MB read before each call, not timed.
        const double forward_cold = median_seconds_cold(
            [&] { attn::cpu::attention(precision, a, attn::AttentionMask{}, probs.data(), ctx.data(), ctx16.data()); });
        const double backward_cold = median_seconds_cold([&] {
          attn::cpu::attention_backward(precision, a, probs.data(), dctx.data(), dprobs.data(), dqkv.data(),
                                        dqkv.data() + hd, dqkv.data() + 2 * hd, &rounded);
        });
        std::printf(", from memory: forward %4.0f GFLOP/s  backward %4.0f GFLOP/s", flop / forward_cold / 1e9,
                    2 * flop / backward_cold / 1e9);
      }
      std::printf("\n");
    }
    cached_attention_probe(d, sentences);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{kAbout, "gemm_bench"};
  int rows = 4096;
  int sentences = 128;
  std::vector<int> dims;
  app.add_option("--rows", rows, "rows of the training step's products")
      ->check(attn::bench::at_least(1))
      ->capture_default_str();
  app.add_option("--sentences", sentences, "sentences of 32 tokens in attention's batch")
      ->check(attn::bench::at_least(1))
      ->capture_default_str();
  app.add_option("D_MODEL_D_FF", dims, "pairs D_MODEL D_FF; default: 256 1024 512 2048")
      ->check(attn::bench::at_least(1));
  return attn::bench::run_main(app, argc, argv, [&] {
    if (dims.size() % 2 != 0)
      throw CLI::ValidationError("D_MODEL_D_FF",
                                 "sizes come in pairs D_MODEL D_FF, got " + std::to_string(dims.size()) + " number(s)");
    std::vector<std::pair<int, int>> sizes;
    for (std::size_t i = 0; i < dims.size(); i += 2) sizes.emplace_back(dims[i], dims[i + 1]);
    if (sizes.empty()) sizes = {{256, 1024}, {512, 2048}};
    return run(sizes, rows, sentences);
  });
}
