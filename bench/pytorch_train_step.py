#!/usr/bin/python3
"""The same training step as train_step_bench, in PyTorch (Debian's python3-torch), for comparison.

    bench/pytorch_train_step.py [--bf16] [--sentences N] [--dropout P] [PRESET...]
                                                          default: small base, float32, 128, 0.1

--bf16: mixed precision with torch.autocast("cpu", torch.bfloat16), the counterpart of
train_step_bench --precision bf16. --sentences N: N pairs a batch (32 for the cpu-hour preset's
batches of 1024 tokens); --dropout P: the dropout rate (0 for cpu-hour's
first four epochs, 0.1 from the fifth).

One step: forward, backward and Adam update of the paper's Transformer (post-LN, shared embedding
and output projection scaled by sqrt(d_model), sinusoidal positions, dropout 0.1, label smoothing
0.1) on 128 pairs x (32 + 32) tokens, vocabulary 8000. Tuned as this machine needs: OpenBLAS told
its core type (0.3.21 misdetects some CPUs), passive OpenMP waiting, malloc without mmap, both
cores. Needs Debian's libopenblas0 (scripts/setup installs it): with the reference BLAS that
python3-torch pulls in by default its matrix products run at ~6 GFLOP/s.
"""
import ctypes
import os

# OpenBLAS 0.3.21 names Zen 4/5 'Zen' (AVX2 kernels); its SkylakeX kernels are faster there, and
# die with SIGILL on a CPU without AVX-512, so they are asked for only where the CPU has it (over
# any OPENBLAS_CORETYPE the environment sets: this machine's sets Haswell).
with open("/proc/cpuinfo") as _f:
    if " avx512f" in _f.read():
        os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# glibc malloc without mmap for large blocks and without trimming: PyTorch frees and re-allocates
# its big activations every step, and fresh mmap'd pages cost page faults each time (~10% here).
_libc = ctypes.CDLL("libc.so.6")
_libc.mallopt(-4, 0)   # M_MMAP_MAX
_libc.mallopt(-1, -1)  # M_TRIM_THRESHOLD: never
import math
import resource
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

PRESETS = {
    "small": dict(layers=3, d=256, ff=1024, h=4),
    "base": dict(layers=6, d=512, ff=2048, h=8),
}


class Transformer(nn.Module):
    def __init__(self, vocab, layers, d, ff, h, dropout=0.1):
        super().__init__()
        self.d = d
        self.embedding = nn.Embedding(vocab, d, padding_idx=0)
        nn.init.normal_(self.embedding.weight, 0, d ** -0.5)
        self.core = nn.Transformer(d, h, layers, layers, ff, dropout, batch_first=True)
        pe = torch.zeros(1024, d)
        pos = torch.arange(1024.0)[:, None]
        i = torch.arange(0, d, 2.0)
        pe[:, 0::2] = torch.sin(pos / 10000 ** (i / d))
        pe[:, 1::2] = torch.cos(pos / 10000 ** (i / d))
        self.register_buffer("pe", pe)
        self.drop = nn.Dropout(dropout)

    def embed(self, ids):
        return self.drop(self.embedding(ids) * math.sqrt(self.d) + self.pe[: ids.shape[1]])

    def forward(self, src, tgt_in):
        causal = self.core.generate_square_subsequent_mask(tgt_in.shape[1])
        y = self.core(self.embed(src), self.embed(tgt_in), tgt_mask=causal)
        return y @ self.embedding.weight.t()


def main():
    torch.set_num_threads(os.cpu_count())
    args = sys.argv[1:]
    bf16, B, dropout, presets = False, 128, 0.1, []
    while args:
        a = args.pop(0)
        if a in ("-h", "--help"):
            print(__doc__)
            sys.exit(0)
        elif a == "--bf16":
            bf16 = True
        elif a in ("--sentences", "--dropout"):
            if not args:
                sys.exit(f"pytorch_train_step.py: {a} needs a value")
            if a == "--sentences":
                B = max(1, int(args.pop(0)))
            else:
                dropout = float(args.pop(0))
        elif a in PRESETS:
            presets.append(a)
        else:
            sys.exit(f"pytorch_train_step.py: unknown argument '{a}' (presets: {', '.join(PRESETS)})")
    presets = presets or ["small", "base"]
    S, T, V = 32, 32, 8000
    for preset in presets:
        torch.manual_seed(1)
        model = Transformer(V, **PRESETS[preset], dropout=dropout)
        opt = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
        src = torch.randint(4, V, (B, S))
        tgt = torch.randint(4, V, (B, T + 1))
        tgt[:, 0] = 2

        def step():
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                logits = model(src, tgt[:, :-1])
            loss = F.cross_entropy(logits.float().reshape(-1, V), tgt[:, 1:].reshape(-1), label_smoothing=0.1,
                                   ignore_index=0)
            loss.backward()
            opt.step()

        step()
        # The median step, as train_step_bench reports it (the machine's cores are shared).
        steps = 5 if preset == "base" else 9
        times = []
        for _ in range(steps):
            t0 = time.perf_counter()
            step()
            times.append(time.perf_counter() - t0)
        secs = sorted(times)[len(times) // 2]
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        params = sum(p.numel() for p in model.parameters()) / 1e6
        print(f"pytorch_train_step {preset:6} torch={torch.__version__} precision={'bf16' if bf16 else 'fp32'} dropout={dropout:g} params={params:.1f}M batch={B}x({S}+{T}) "
              f"tokens/s={B * T / secs:.0f} step_ms={secs * 1e3:.1f} peak_rss_MB={rss:.0f}", flush=True)


if __name__ == "__main__":
    main()
