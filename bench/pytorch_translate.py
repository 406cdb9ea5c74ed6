#!/usr/bin/python3
"""translate_bench's workload in PyTorch (Debian's python3-torch 1.13), fp32 and PyTorch's own int8.

    bench/pytorch_translate.py [--engines torch-fp32,torch-int8] [--threads N] [PRESET...]   default: small base
    bench/pytorch_translate.py --self-check [PRESET...]                                       default: small

Each engine x preset runs in its own child process (this script with --worker), so that peak_rss_MB
is that group's own peak, as translate_bench's is its process's. Lines printed, one per
configuration, in translate_bench's format with the engine in front:

    engine=torch-fp32 model small params=7.6M state_dict_MB=...
    engine=torch-fp32 translate small  beam=1 batch=1  src=32 out=40 sentences/s=... target_tokens/s=... latency_ms=... peak_rss_MB=...

The workload is build/bench/translate_bench's: the paper's post-LN Transformer (presets small and
base as src/model/model_config.cpp defines them; d_k = d_v = 64; biases everywhere; layer norm eps
1e-5; sinusoidal positions; one embedding shared by source, target and the pre-softmax projection,
scaled by sqrt(d_model) on input), vocabulary 8000, random weights, 32-token random sources (ids 4..7999,
torch seed 3), greedy and beam 4 (length penalty alpha 0.6) at batch 1, 8 and 32. Every sentence gets
exactly 40 output tokens, EOS included: SearchOptions min_length = max_length = 40 in beam_search.cpp
means 40 decoder steps, EOS forbidden at steps 1..39 and forced at step 40 (target tokens counted =
tokens + EOS = 40 per sentence). Warm-up once, then 5 reps at batch 1, 2 (base) or 3 (small) above;
latency_ms is the time of one call (the whole batch), as translate_bench prints it.

How it decodes (what a careful PyTorch user writes for CPU inference):
* Incremental decoding: the encoder runs once; every decoder layer's cross-attention keys/values
  are projected once per sentence and kept per sentence (the beam's rows of a sentence share them,
  as in attn, instead of being copied beam times); self-attention keys/values are cached and grown
  by one position per step. The fused q|k|v projection is one nn.Linear, cross-attention's k|v one.
* Beam search is batched over sentences x beam ([batch*beam] rows, vectorised top-k over
  beam x vocab); the cache and the token history follow the surviving hypotheses by index_select;
  finished sentences leave the batch (index_select over sentences). Its rules are beam_search.cpp's:
  PAD/BOS never generated, EOS not before min_length, EOS forced at max_length, score
  log P / ((5 + |Y|) / 6)^alpha, width = beam - finished, early stop when no live hypothesis can
  beat the best finished one. Greedy is the same search with beam 1 (argmax), as in attn.
* torch.inference_mode(), torch.set_num_threads(--threads, default 2 = this machine's cores); the
  1/sqrt(d_k) scale folded into q; no padding mask built when no source is padded.
* int8 (engine torch-int8): torch.quantization.quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8)
  -- int8 weights, activations quantized per call -- on every nn.Linear, the pre-softmax projection
  included (it is an nn.Linear tied to the embedding, as Hugging Face's lm_head; quantize_dynamic
  gives it its own int8 copy, the embedding lookup stays fp32). --int8-keep-output-fp32 leaves it fp32.
  Quantized engine: onednn. Debian's build has qnnpack and onednn (no fbgemm, hence no 'x86'
  engine either). Measured on this machine (AMD EPYC Zen 3, 2 cores, AVX2, no AVX-512/VNNI),
  dynamic int8 nn.Linear, GFLOP/s for rows M = 1 / 8 / 32 / 128:
      256x8000   onednn 8.4 / 37.4 / 112 / 145    qnnpack 0.5 / 4.1 / 15.6 / 29.1   (fp32 OpenBLAS 4.8 / 15.9 / 59.3 / 78.6)
      512x2048   onednn 5.7 / 21.7 / 51.3 / 103   qnnpack 0.3 / 2.2 / 8.4 / 23.5    (fp32 4.7 / 18.0 / 63.4 / 76.4)
      256x256    onednn 0.8 / 3.5 / 8.4 / 28.9    qnnpack 0.1 / 0.1 / 0.5 / 2.1     (fp32 2.9 / 11.8 / 30.2 / 52.6)
  qnnpack (an ARM-first library: SSE2 kernels on x86) is 4-30x slower everywhere, so onednn it is
  (--qengine overrides). Per-channel weight scales (per_channel_dynamic_qconfig) measured the same
  speed as the default per-tensor qconfig; the default is kept.
* fp32 matrix products go to OpenBLAS (Debian's libopenblas0-openmp, as bench/pytorch_train_step.py
  requires; the reference BLAS python3-torch pulls in alone is ~10x slower). Its core type is left to
  OpenBLAS's detection, which names Zen 3 to 5 'Zen' (printed in the header line): where the CPU
  has AVX-512 (Zen 4/5) OPENBLAS_CORETYPE=SkylakeX is set, as in pytorch_train_step.py; on a CPU
  without it those kernels die with SIGILL. malloc keeps freed memory (no mmap/trim), as in pytorch_train_step.py.
  OMP_WAIT_POLICY is left at libgomp's default (--omp-wait sets it for the workers): with other
  work on the 2 cores, both ACTIVE and PASSIVE made 2-thread runs several times slower in a quick
  trial, and --threads 1 may then be the faster setting; on an idle machine compare both.
* int8 here is slower than fp32 at decoding shapes (a few to 128 rows per product): onednn's dynamic
  linear pays a per-call cost (quantizing the activations, aminmax, its own reorders) of ~100-300 us
  that small products do not repay; it wins only from ~128 rows up (the 8000-wide output layer
  earliest). That is PyTorch 1.13's int8 path as shipped, which is what this benchmark compares.
* Not used, and why: bf16 (no AVX512-BF16 on this CPU); channels_last (no convolutions);
  torch.compile, scaled_dot_product_attention (PyTorch 2.x only); nn.MultiheadAttention's fast
  path (its projections are not nn.Linear, so quantize_dynamic would skip them); torch.jit: not
  tried -- the step's time is in the products (addmm, bmm, quantized linear: ~75-85% of a batch-8
  greedy step in torch.profiler), so removing Python dispatch would gain at most the rest.

--self-check compares the cached incremental decoder with a full recomputation without cache (the
whole prefix re-run at every step, in float64): greedy token paths and log-probabilities with forced
length and without (EOS allowed, argmax paths compared step by step), beam 4's hypotheses re-scored
by the full model (which checks the cache's reordering), padded batches of mixed source lengths
against each sentence alone, and the int8 model's greedy paths against fp32's (agreement reported,
not required).
"""
import ctypes
import os
import sys

# Before torch loads: glibc malloc without mmap for large blocks and without trimming (PyTorch frees
# and re-allocates its activations every step; fresh mmap'd pages cost page faults each time).
_libc = ctypes.CDLL("libc.so.6")
_libc.mallopt(-4, 0)  # M_MMAP_MAX
_libc.mallopt(-1, -1)  # M_TRIM_THRESHOLD: never
os.environ.setdefault("GLOG_minloglevel", "2")  # qnnpack warns on every call otherwise
# OpenBLAS 0.3.21 names Zen 4/5 'Zen' (AVX2 kernels); its SkylakeX kernels are faster there, and
# die with SIGILL on a CPU without AVX-512, so they are asked for only where the CPU has it (over
# any OPENBLAS_CORETYPE the environment sets: this machine's sets Haswell).
with open("/proc/cpuinfo") as _f:
    if " avx512f" in _f.read():
        os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"

import argparse
import io
import math
import resource
import subprocess
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

PRESETS = {  # src/model/model_config.cpp
    "small": dict(layers=3, d=256, ff=1024, h=4, dk=64),
    "base": dict(layers=6, d=512, ff=2048, h=8, dk=64),
    "tiny": dict(layers=2, d=32, ff=64, h=4, dk=8),
}
VOCAB, SRC_LEN, OUT_LEN = 8000, 32, 40
PAD, UNK, BOS, EOS = 0, 1, 2, 3
EPS = 1e-5


def sinusoids(n, d):
    pe = torch.zeros(n, d, dtype=torch.float64)
    pos = torch.arange(n, dtype=torch.float64)[:, None]
    i = torch.arange(0, d, 2, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos / 10000 ** (i / d))
    pe[:, 1::2] = torch.cos(pos / 10000 ** (i / d))
    return pe.float()


class EncoderLayer(nn.Module):
    def __init__(self, d, ff, h, dk):
        super().__init__()
        self.h, self.dk = h, dk
        self.qkv = nn.Linear(d, 3 * h * dk)
        self.out = nn.Linear(h * dk, d)
        self.norm1 = nn.LayerNorm(d, eps=EPS)
        self.fc1 = nn.Linear(d, ff)
        self.fc2 = nn.Linear(ff, d)
        self.norm2 = nn.LayerNorm(d, eps=EPS)

    def forward(self, x, key_mask):  # x [B, S, d]; key_mask [B, 1, 1, S] additive or None
        B, S, _ = x.shape
        q, k, v = self.qkv(x).view(B, S, 3, self.h, self.dk).permute(2, 0, 3, 1, 4)
        scores = (q * self.dk ** -0.5) @ k.transpose(-1, -2)
        if key_mask is not None:
            scores = scores + key_mask
        ctx = scores.softmax(-1) @ v  # [B, h, S, dk]
        x = self.norm1(x + self.out(ctx.transpose(1, 2).reshape(B, S, -1)))
        return self.norm2(x + self.fc2(F.relu(self.fc1(x))))


class DecoderLayer(nn.Module):
    def __init__(self, d, ff, h, dk):
        super().__init__()
        self.h, self.dk = h, dk
        self.self_qkv = nn.Linear(d, 3 * h * dk)
        self.self_out = nn.Linear(h * dk, d)
        self.norm1 = nn.LayerNorm(d, eps=EPS)
        self.cross_q = nn.Linear(d, h * dk)
        self.cross_kv = nn.Linear(d, 2 * h * dk)
        self.cross_out = nn.Linear(h * dk, d)
        self.norm2 = nn.LayerNorm(d, eps=EPS)
        self.fc1 = nn.Linear(d, ff)
        self.fc2 = nn.Linear(ff, d)
        self.norm3 = nn.LayerNorm(d, eps=EPS)

    def memory_kv(self, memory):
        """Cross-attention keys and values of the encoder output, once per sentence: 2 x [B, h, S, dk]."""
        B, S, _ = memory.shape
        k, v = self.cross_kv(memory).view(B, S, 2, self.h, self.dk).permute(2, 0, 3, 1, 4)
        return k.contiguous(), v.contiguous()

    def step(self, y, cache, mem_k, mem_v, mem_mask, beam):
        """One position for R = sentences x beam rows. y [R, d]; cache: [k, v] of [R, h, t, dk] or None."""
        R, h, dk = y.shape[0], self.h, self.dk
        q, k, v = self.self_qkv(y).view(R, 3, h, 1, dk).unbind(1)
        if cache is not None:
            k = torch.cat((cache[0], k), 2)
            v = torch.cat((cache[1], v), 2)
        ctx = ((q * dk ** -0.5) @ k.transpose(-1, -2)).softmax(-1) @ v  # [R, h, 1, dk]
        y = self.norm1(y + self.self_out(ctx.view(R, h * dk)))
        # Cross-attention: a sentence's beam rows are its queries against its memory [B, h, S, dk].
        B = R // beam
        q = self.cross_q(y).view(B, beam, h, dk).transpose(1, 2) * dk ** -0.5  # [B, h, beam, dk]
        scores = q @ mem_k.transpose(-1, -2)  # [B, h, beam, S]
        if mem_mask is not None:
            scores = scores + mem_mask
        ctx = scores.softmax(-1) @ mem_v  # [B, h, beam, dk]
        y = self.norm2(y + self.cross_out(ctx.transpose(1, 2).reshape(R, h * dk)))
        return self.norm3(y + self.fc2(F.relu(self.fc1(y)))), [k, v]

    def full(self, y, mem_k, mem_v):
        """The whole target prefix at once (causal), for the self-check's cache-free reference. y [B, T, d]."""
        B, T, _ = y.shape
        h, dk = self.h, self.dk
        q, k, v = self.self_qkv(y).view(B, T, 3, h, dk).permute(2, 0, 3, 1, 4)
        scores = (q * dk ** -0.5) @ k.transpose(-1, -2)
        causal = torch.triu(torch.full((T, T), float("-inf"), dtype=y.dtype), 1)
        ctx = (scores + causal).softmax(-1) @ v
        y = self.norm1(y + self.self_out(ctx.transpose(1, 2).reshape(B, T, -1)))
        q = self.cross_q(y).view(B, T, h, dk).transpose(1, 2) * dk ** -0.5
        ctx = (q @ mem_k.transpose(-1, -2)).softmax(-1) @ mem_v
        y = self.norm2(y + self.cross_out(ctx.transpose(1, 2).reshape(B, T, -1)))
        return self.norm3(y + self.fc2(F.relu(self.fc1(y))))


class Transformer(nn.Module):
    def __init__(self, vocab, layers, d, ff, h, dk, max_positions=1024):
        super().__init__()
        self.d = d
        self.embedding = nn.Embedding(vocab, d)
        nn.init.normal_(self.embedding.weight, 0, d ** -0.5)
        self.encoder = nn.ModuleList(EncoderLayer(d, ff, h, dk) for _ in range(layers))
        self.decoder = nn.ModuleList(DecoderLayer(d, ff, h, dk) for _ in range(layers))
        self.project = nn.Linear(d, vocab, bias=False)
        self.project.weight = self.embedding.weight  # shared pre-softmax projection
        self.register_buffer("pe", sinusoids(max_positions, d), persistent=False)

    def embed(self, ids, start=0):
        return self.embedding(ids) * math.sqrt(self.d) + self.pe[start:start + ids.shape[-1]]

    def encode(self, src, src_lengths):
        """Encoder, then every decoder layer's memory keys/values. Returns (memory kv list, additive mask)."""
        S = src.shape[1]
        mask = None
        if bool((src_lengths < S).any()):
            pad = torch.arange(S)[None, :] >= src_lengths[:, None]
            mask = torch.zeros(pad.shape, dtype=self.pe.dtype).masked_fill(pad, float("-inf"))[:, None, None, :]
        x = self.embed(src)
        for layer in self.encoder:
            x = layer(x, mask)
        return [layer.memory_kv(x) for layer in self.decoder], mask

    def step(self, tokens, t, caches, memory, mem_mask, beam):
        """Log-probabilities [R, V] of the next token after `tokens` [R] at position t; caches updated."""
        y = self.embed(tokens[:, None], t)[:, 0]
        for l, layer in enumerate(self.decoder):
            y, caches[l] = layer.step(y, caches[l], memory[l][0], memory[l][1], mem_mask, beam)
        return F.log_softmax(self.project(y), dim=-1)

    def full_log_probs(self, src, tgt_in):
        """Cache-free: log-probabilities [B, T, V] for every position of tgt_in (one unpadded batch)."""
        memory, mask = self.encode(src, torch.full((src.shape[0],), src.shape[1]))
        y = self.embed(tgt_in)
        for l, layer in enumerate(self.decoder):
            y = layer.full(y, *memory[l])
        return F.log_softmax(self.project(y), dim=-1)


def length_penalty(length, alpha):
    return ((5.0 + length) / 6.0) ** alpha


def beam_search(model, sources, beam, max_len=OUT_LEN, min_len=OUT_LEN, alpha=0.6):
    """beam_search.cpp's search (n_best 1, early stop), batched. sources: list of id lists (no EOS).
    Returns per sentence (tokens without EOS, log_prob, score)."""
    n = len(sources)
    S = max(len(s) for s in sources)
    src = torch.full((n, S), PAD, dtype=torch.long)
    for i, s in enumerate(sources):
        src[i, :len(s)] = torch.tensor(s)
    src_lengths = torch.tensor([len(s) for s in sources])
    memory, mem_mask = model.encode(src, src_lengths)
    V = model.embedding.num_embeddings
    caches = [None] * len(model.decoder)
    active = torch.arange(n)  # caller's index of each sentence in the batch
    cum = torch.zeros(n, 1)  # [sentences, K] log P of each live hypothesis, -inf = dead row
    seqs = torch.zeros(n, 0, dtype=torch.long)  # [sentences * K, t]
    tokens = torch.full((n,), BOS, dtype=torch.long)
    best = [None] * n  # (score, log_prob, tokens) of the best finished hypothesis
    nfin = torch.zeros(n, dtype=torch.long)
    # The steps (at most max_len); the cached self-attention grows one position per step.
    for t in range(max_len):
        B, K = cum.shape
        logp = model.step(tokens, t, caches, memory, mem_mask, K).view(B, K, V)
        if t + 1 >= max_len:  # EOS forced: every live hypothesis ends here
            final = (cum + logp[:, :, EOS]).tolist()
            lp = length_penalty(t + 1, alpha)
            for b in range(B):
                for r in range(K):
                    if final[b][r] > float("-inf") and (best[active[b]] is None or final[b][r] / lp > best[active[b]][0]):
                        best[active[b]] = (final[b][r] / lp, final[b][r], seqs[b * K + r].tolist())
            break
        logp[:, :, PAD] = float("-inf")
        logp[:, :, BOS] = float("-inf")
        if t + 1 < min_len:
            logp[:, :, EOS] = float("-inf")
        top_v, top_i = (cum[:, :, None] + logp).view(B, K * V).topk(beam, dim=1)  # sorted, best first
        parent, tok = top_i // V, top_i % V
        alive = (torch.arange(beam)[None, :] < (beam - nfin)[:, None]) & (top_v > float("-inf"))
        ended = alive & (tok == EOS)
        live = alive & ~ended
        rows = (torch.arange(B)[:, None] * K + parent).view(-1)
        seqs = torch.cat((seqs.index_select(0, rows), tok.view(-1, 1)), 1)
        done = ~live.any(1)
        if bool(ended.any()):
            lp = length_penalty(t + 1, alpha)
            for b, j in ended.nonzero().tolist():
                lpb = top_v[b, j].item()
                i = active[b].item()
                if best[i] is None or lpb / lp > best[i][0]:
                    best[i] = (lpb / lp, lpb, seqs[b * beam + j, :-1].tolist())
            nfin = nfin + ended.sum(1)
        if bool((nfin > 0).any()):
            # Early stop: the best finished score against the best any live hypothesis can reach.
            bound = torch.where(live, top_v, torch.tensor(float("-inf"))).max(1).values / length_penalty(max_len, alpha)
            for b in (nfin > 0).nonzero().view(-1).tolist():
                if best[active[b].item()][0] >= bound[b].item():
                    done[b] = True
        cum = torch.where(live, top_v, torch.tensor(float("-inf")))
        if bool(done.all()):
            break
        if bool(done.any()):  # finished sentences leave the batch
            keep = (~done).nonzero().view(-1)
            rows = (keep[:, None] * beam + torch.arange(beam)[None, :]).view(-1)
            active, cum, nfin, seqs = active[keep], cum[keep], nfin[keep], seqs.index_select(0, rows)
            memory = [(k.index_select(0, keep), v.index_select(0, keep)) for k, v in memory]
            if mem_mask is not None:
                mem_mask = mem_mask.index_select(0, keep)
            origin = rows.view(-1, beam)
        else:
            origin = None
        # Reorder the caches to the surviving hypotheses' parents.
        parent_rows = (torch.arange(B)[:, None] * K + parent).view(-1)
        if origin is not None:
            parent_rows = parent_rows.view(B, beam)[keep].view(-1)
        caches = [[c.index_select(0, parent_rows) for c in kv] for kv in caches]
        tokens = seqs[:, -1]
    return [(h[2], h[1], h[0]) for h in best]


def build(preset, engine, qengine, keep_output_fp32):
    torch.manual_seed(1)
    model = Transformer(VOCAB, **PRESETS[preset]).eval()
    model.params = sum(p.numel() for p in model.parameters())
    if engine == "torch-int8":
        torch.backends.quantized.engine = qengine
        if keep_output_fp32:
            model.project = nn.Identity()
        # In place: each fp32 nn.Linear is freed as its int8 replacement is made.
        torch.quantization.quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8, inplace=True)
        if keep_output_fp32:
            model.project = nn.Linear(model.d, VOCAB, bias=False)
            model.project.weight = model.embedding.weight
    return model


def vm_hwm_mb():
    """Peak resident memory since the last reset_peak_rss() (VmHWM), in MB as translate_bench's."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def reset_peak_rss():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current RSS (Linux >= 4.0)
    except OSError:
        pass


def state_dict_mb(model):
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    return buf.tell() / 1e6


def random_sources(batch, gen):
    return torch.randint(4, VOCAB, (batch, SRC_LEN), generator=gen).tolist()


def worker(args):
    preset, engine = args.worker
    torch.set_num_threads(args.threads)
    model = build(preset, engine, args.qengine, args.int8_keep_output_fp32)
    size = state_dict_mb(model)
    # The fp32 weights an int8 model is quantized from are built in this process too: the peak
    # reported per configuration is the decoding's, from a reset after the model is ready.
    build_peak = vm_hwm_mb()
    reset_peak_rss()
    print(f"engine={engine} model {preset:6} params={model.params / 1e6:.1f}M state_dict_MB={size:.1f} "
          f"build_peak_rss_MB={build_peak:.0f}" + (f" qengine={args.qengine}" if engine == "torch-int8" else ""),
          flush=True)
    gen = torch.Generator().manual_seed(3)
    with torch.inference_mode():
        for beam in (1, 4):
            for batch in (1, 8, 32):
                sources = random_sources(batch, gen)
                beam_search(model, sources, beam)  # warm-up
                reps = 5 if batch == 1 else (2 if preset == "base" else 3)
                t0 = time.perf_counter()
                tokens = 0
                for _ in range(reps):
                    for toks, _, _ in beam_search(model, sources, beam):
                        tokens += len(toks) + 1
                secs = time.perf_counter() - t0
                rss = vm_hwm_mb()
                print(f"engine={engine} translate {preset:6} beam={beam} batch={batch:<2} src={SRC_LEN} out={OUT_LEN} "
                      f"sentences/s={reps * batch / secs:.1f} target_tokens/s={tokens / secs:.0f} "
                      f"latency_ms={secs / reps * 1e3:.1f} peak_rss_MB={rss:.0f}", flush=True)


# ---------------------------------------------------------------------------------------------
# --self-check


def greedy_full(model, src, steps, min_len):
    """Greedy decoding by full recomputation of the prefix at every step (no cache), one sentence.
    Returns the tokens (EOS included if chosen), their log-probs and the top-2 margins."""
    prefix = [BOS]
    out, lps, margins = [], [], []
    for t in range(steps):
        logp = model.full_log_probs(src[None], torch.tensor([prefix]))[0, -1].clone()
        logp[PAD] = logp[BOS] = float("-inf")
        if t + 1 < min_len:
            logp[EOS] = float("-inf")
        if t + 1 >= steps:
            tok = EOS
        else:
            top = logp.topk(2)
            tok = top.indices[0].item()
            margins.append((top.values[0] - top.values[1]).item())
        out.append(tok)
        lps.append(logp[tok].item())
        if tok == EOS:
            break
        prefix.append(tok)
    return out, lps, margins


def sequence_log_prob(model, src, toks):
    """log P(toks + EOS | src) by one cache-free forward pass."""
    tgt = [BOS] + toks
    logp = model.full_log_probs(torch.tensor(src)[None], torch.tensor([tgt]))[0]
    return sum(logp[i, tok].item() for i, tok in enumerate(toks + [EOS]))


def self_check(args):
    torch.set_num_threads(args.threads)
    failures = []
    report = lambda ok, what: (print(("ok   " if ok else "FAIL ") + what, flush=True), None if ok else failures.append(what))
    for preset in args.presets:
        model = build(preset, "torch-fp32", args.qengine, False)
        ref = build(preset, "torch-fp32", args.qengine, False).double()
        gen = torch.Generator().manual_seed(5)
        with torch.inference_mode():
            # 1. Greedy, forced length 40: incremental fp32 (a batch of 4) vs full recomputation in float64.
            sources = random_sources(4, gen)
            inc = beam_search(model, sources, 1)
            for i, s in enumerate(sources):
                toks, lps, margins = greedy_full(ref, torch.tensor(s), OUT_LEN, OUT_LEN)
                same = inc[i][0] + [EOS] == toks
                lp_err = abs(inc[i][1] - sum(lps))
                report(same and lp_err < 1e-3 * max(1, abs(sum(lps))),
                       f"{preset} greedy forced 40, sentence {i}: tokens {'equal' if same else 'DIFFER'} "
                       f"({len(toks)} incl. EOS), log P {inc[i][1]:.5f} vs {sum(lps):.5f} (float64 full), "
                       f"smallest top-2 margin {min(margins):.2e}")
            # 2. Without forced length (EOS allowed, no minimum): argmax paths step by step, 12 steps.
            #    Random weights make EOS as unlikely as any token, so an output layer biased towards
            #    EOS (its embedding row scaled by 1.5) makes some searches end it early too (on a random
            #    model EOS then wins at step 1 or never: early ends, finished hypotheses narrowing
            #    the beam and early stop are exercised, EOS in mid-sentence is not).
            eos_model = build(preset, "torch-fp32", args.qengine, False)
            eos_model.embedding.weight[EOS] *= 1.5
            eos_ref = build(preset, "torch-fp32", args.qengine, False)
            eos_ref.embedding.weight[EOS] *= 1.5
            eos_ref = eos_ref.double()
            for bias_eos in (False, True):
                m2, r2 = (eos_model, eos_ref) if bias_eos else (model, ref)
                srcs = random_sources(4, gen)
                inc = beam_search(m2, srcs, 1, max_len=12, min_len=0)
                for i, s in enumerate(srcs):
                    toks, lps, margins = greedy_full(r2, torch.tensor(s), 12, 0)
                    same = inc[i][0] + [EOS] == toks
                    report(same, f"{preset} greedy free (max 12{', EOS favoured' if bias_eos else ''}), sentence {i}: "
                                 f"{len(toks)} tokens, {'equal' if same else 'DIFFER: ' + str(inc[i][0]) + ' vs ' + str(toks)}"
                                 + (f", smallest margin {min(margins):.2e}" if margins else ""))
            # 3. Beam 4: every returned hypothesis re-scored by the full model (cache reordering).
            for max_len, min_len, m3, r3 in ((OUT_LEN, OUT_LEN, model, ref), (12, 0, model, ref),
                                             (12, 0, eos_model, eos_ref)):
                srcs = random_sources(8 if m3 is eos_model else 4, gen)
                for i, (toks, lp, score) in enumerate(beam_search(m3, srcs, 4, max_len=max_len, min_len=min_len)):
                    full = sequence_log_prob(r3, srcs[i], toks)
                    report(abs(full - lp) < 1e-3 * max(1, abs(full)),
                           f"{preset} beam 4 (max {max_len}, min {min_len}{', EOS favoured' if m3 is eos_model else ''}) "
                           f"sentence {i}: log P {lp:.5f} vs "
                           f"{full:.5f} re-scored without cache, {len(toks) + 1} tokens")
            # 4. Padded batch of mixed source lengths vs each sentence alone.
            srcs = [s[:n] for s, n in zip(random_sources(4, gen), (32, 7, 19, 1))]
            for beam in (1, 4):
                batched = beam_search(model, srcs, beam, max_len=20, min_len=0)
                alone = [beam_search(model, [s], beam, max_len=20, min_len=0)[0] for s in srcs]
                same = all(a[0] == b[0] and abs(a[1] - b[1]) < 1e-3 for a, b in zip(batched, alone))
                report(same, f"{preset} beam {beam}, padded batch (sources of 32/7/19/1 tokens) equals each alone")
            # 5. int8 against fp32 (information: quantization changes argmaxes where margins are small).
            q = build(preset, "torch-int8", args.qengine, False)
            srcs = random_sources(8, gen)
            a = beam_search(model, srcs, 1)
            b = beam_search(q, srcs, 1)
            agree = sum(x == y for s1, s2 in zip(a, b) for x, y in zip(s1[0], s2[0]))
            first = [next((j for j, (x, y) in enumerate(zip(s1[0], s2[0])) if x != y), len(s1[0])) for s1, s2 in zip(a, b)]
            print(f"info {preset} int8 ({args.qengine}) vs fp32 greedy, 8 sentences: {agree}/{8 * (OUT_LEN - 1)} tokens "
                  f"agree; first difference at steps {first}", flush=True)
    print("PASSED" if not failures else f"FAILED: {len(failures)} checks", flush=True)
    return 0 if not failures else 1


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("presets", nargs="*")
    p.add_argument("--engines", default="torch-fp32,torch-int8")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--qengine", default="onednn", choices=[e for e in torch.backends.quantized.supported_engines if e != "none"])
    p.add_argument("--int8-keep-output-fp32", action="store_true", help="leave the pre-softmax projection in fp32")
    p.add_argument("--omp-wait", choices=["PASSIVE", "ACTIVE"], help="OMP_WAIT_POLICY for the workers")
    p.add_argument("--self-check", action="store_true")
    p.add_argument("--worker", nargs=2, metavar=("PRESET", "ENGINE"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        worker(args)
        return 0
    if args.self_check:
        args.presets = args.presets or ["small"]
        return self_check(args)
    presets = args.presets or ["small", "base"]
    ob = ctypes.CDLL("libopenblas.so.0")
    ob.openblas_get_corename.restype = ctypes.c_char_p
    print(f"# torch={torch.__version__} threads={args.threads} blas=OpenBLAS/{ob.openblas_get_corename().decode()} "
          f"qengine={args.qengine} OMP_WAIT_POLICY={args.omp_wait or os.environ.get('OMP_WAIT_POLICY', 'default')}",
          flush=True)
    env = dict(os.environ)
    if args.omp_wait:
        env["OMP_WAIT_POLICY"] = args.omp_wait
    rc = 0
    for preset in presets:
        for engine in args.engines.split(","):
            cmd = [sys.executable, os.path.abspath(__file__), "--worker", preset, engine, "--threads", str(args.threads),
                   "--qengine", args.qengine] + (["--int8-keep-output-fp32"] if args.int8_keep_output_fp32 else [])
            rc |= subprocess.call(cmd, env=env)
    return rc


if __name__ == "__main__":
    sys.exit(main())
