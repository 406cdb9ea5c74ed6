#!/usr/bin/python3
"""An independent PyTorch implementation of the Transformer, written from the paper, used to check
attn's loss and gradients (tests/reference/parity_dump writes the inputs).

    transformer_reference.py DIR    # DIR holds model.safetensors, config.json, batch.json, grads.safetensors

Everything runs in float64; attn runs in float32. The check passes when the loss and every
gradient tensor agree to a relative error below 1e-4. It also shows that a PyTorch user loads
attn's safetensors with plain load_state_dict, tensor names and layouts as docs/model-format.md says.

Two things are attn's definitions rather than the paper's, and the reference follows them:
* A query row whose mask leaves no key (a padded query under a restricted window, at least window
  positions past its sentence's end) gets all-zero attention weights, so its context is 0; attn's
  masked softmax (kernels/cpu/attention_softmax.cpp) does this, where a plain softmax over nothing
  but -inf gives NaN. Such rows are padding: their finite values reach neither the loss nor the
  exported weights, but a NaN there would spread (0 * NaN), so the restricted case has them.
* Dropout masks are attn's rule (kernels/cpu/dropout.cpp), recomputed here from its definition:
  every dropout site's seed is derive_seed(batch seed, site id) (core/seed.h), and element i of the
  site's [B, T, d_model] tensor, flattened, is kept when the top 24 bits of
  lowbias32(lowbias32(lo(i) ^ lo(seed)) + (hi(i) ^ hi(seed)) * 0x9E3779B9) are >= floor(p * 2^24);
  kept elements are scaled by 1 / (1 - p). The site ids are model/transformer.cpp's: source and
  target embeddings 1 and 2, encoder layer l's sublayers 1000 + 16 l + {0, 1}, decoder layer l's
  2000000 + 16 l + {0, 1, 2} (self-attention, cross-attention, feed-forward). The activation
  dropout of a layer's feed-forward hidden layer (config "activation_dropout", its own rate) is
  site 8 of the layer, on the [B, T, d_ff] tensor of ReLU outputs.

Every comparison is written `not error < tolerance`, so that a NaN on either side fails it.
"""
import json
import math
import struct
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def read_safetensors(path):
    """The format by its specification (no safetensors package needed)."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    tensors = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        assert e["dtype"] == "F32", e
        b, end = e["data_offsets"]
        arr = np.frombuffer(data[b:end], dtype="<f4").reshape(e["shape"])
        tensors[name] = torch.from_numpy(arr.astype(np.float64))
    return tensors


M32, M64 = 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF


def mix64(x):
    """SplitMix64's finaliser (core/seed.h)."""
    x = (x + 0x9E3779B97F4A7C15) & M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def derive_seed(seed, salt):
    return mix64(seed ^ mix64(salt))


def lowbias32(x):
    """Chris Wellons' lowbias32 hash on uint64 arrays holding 32-bit values."""
    x = x ^ (x >> np.uint64(16))
    x = (x * np.uint64(0x7FEB352D)) & np.uint64(M32)
    x = x ^ (x >> np.uint64(15))
    x = (x * np.uint64(0x846CA68B)) & np.uint64(M32)
    return x ^ (x >> np.uint64(16))


class Dropout:
    """attn's dropout (see the module's docstring); rate 0 is the identity."""
    ENCODER_BASE, DECODER_BASE, PER_LAYER = 1000, 2000000, 16

    HIDDEN_SITE = 8

    def __init__(self, rate, seed, activation=0):
        self.rate = float(np.float32(rate))  # attn's rate is a float32
        self.seed = seed
        self.dropped = self.elements = 0
        self.hidden = Dropout(activation, seed) if activation > 0 else None

    def hidden_layer(self, x, layer_site):
        """The activation dropout of the feed-forward hidden layer of the layer at layer_site."""
        return x if self.hidden is None else self.hidden(x, layer_site + Dropout.HIDDEN_SITE)

    def __call__(self, x, site):
        if self.rate <= 0:
            return x
        seed = derive_seed(self.seed, site)
        i = np.arange(x.numel(), dtype=np.uint64)
        lo, hi = i & np.uint64(M32), i >> np.uint64(32)
        mixed_hi = ((hi ^ np.uint64(seed >> 32)) * np.uint64(0x9E3779B9)) & np.uint64(M32)
        h = lowbias32((lowbias32(lo ^ np.uint64(seed & M32)) + mixed_hi) & np.uint64(M32))
        keep = (h >> np.uint64(8)) >= np.uint64(int(self.rate * (1 << 24)))
        self.dropped += int(keep.size - keep.sum())
        self.elements += int(keep.size)
        return x * torch.from_numpy(keep.reshape(tuple(x.shape))) / (1 - self.rate)


NO_DROPOUT = Dropout(0, 0)


def sinusoids(n, d):
    pe = torch.zeros(n, d, dtype=torch.float64)
    pos = torch.arange(n, dtype=torch.float64)[:, None]
    i = torch.arange(0, d, 2, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos / 10000 ** (i / d))
    pe[:, 1::2] = torch.cos(pos / 10000 ** (i / d))
    return pe


class MultiHeadAttention(nn.Module):
    def __init__(self, d, h, dk, dv):
        super().__init__()
        self.h, self.dk, self.dv = h, dk, dv
        self.q_proj = nn.Linear(d, h * dk)
        self.k_proj = nn.Linear(d, h * dk)
        self.v_proj = nn.Linear(d, h * dv)
        self.out_proj = nn.Linear(h * dv, d)

    def forward(self, xq, xkv, key_lengths, causal=False, window=0):
        B, Tq, _ = xq.shape
        Tk = xkv.shape[1]
        q = self.q_proj(xq).view(B, Tq, self.h, self.dk).transpose(1, 2)
        k = self.k_proj(xkv).view(B, Tk, self.h, self.dk).transpose(1, 2)
        v = self.v_proj(xkv).view(B, Tk, self.h, self.dv).transpose(1, 2)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.dk)
        qi = torch.arange(Tq)[:, None]
        ki = torch.arange(Tk)[None, :]
        blocked = ki[None, :, :] >= key_lengths[:, None, None]  # padding keys
        if causal:
            blocked = blocked | (ki > qi)[None]
        if window > 0:
            blocked = blocked | ((qi - ki).abs() > window)[None]
        # A row with no key gets zero weights (attn's definition); its scores stay finite so that
        # neither softmax nor its gradient makes a NaN, then its weights are zeroed.
        no_key = blocked.all(dim=-1, keepdim=True)
        self.rows_without_keys = int(no_key.sum())
        scores = scores.masked_fill((blocked & ~no_key)[:, None], float("-inf"))
        # Kept for the attention-export check.
        self.probs = F.softmax(scores, dim=-1).masked_fill(no_key[:, None], 0.0)
        ctx = self.probs @ v
        return self.out_proj(ctx.transpose(1, 2).reshape(B, Tq, self.h * self.dv))


class FeedForward(nn.Module):
    def __init__(self, d, dff):
        super().__init__()
        self.fc1 = nn.Linear(d, dff)
        self.fc2 = nn.Linear(dff, d)

    def forward(self, x, drop, site):
        return self.fc2(drop.hidden_layer(F.relu(self.fc1(x)), site))


class EncoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["d_model"]
        self.self_attn = MultiHeadAttention(d, c["heads"], c["d_k"], c["d_v"])
        self.self_attn_norm = nn.LayerNorm(d, eps=c["layernorm_eps"])
        self.ffn = FeedForward(d, c["d_ff"])
        self.ffn_norm = nn.LayerNorm(d, eps=c["layernorm_eps"])
        self.window = c["attention_window"]

    def forward(self, x, src_lengths, drop, site):
        x = self.self_attn_norm(x + drop(self.self_attn(x, x, src_lengths, window=self.window), site))
        return self.ffn_norm(x + drop(self.ffn(x, drop, site), site + 1))


class DecoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["d_model"]
        self.self_attn = MultiHeadAttention(d, c["heads"], c["d_k"], c["d_v"])
        self.self_attn_norm = nn.LayerNorm(d, eps=c["layernorm_eps"])
        self.cross_attn = MultiHeadAttention(d, c["heads"], c["d_k"], c["d_v"])
        self.cross_attn_norm = nn.LayerNorm(d, eps=c["layernorm_eps"])
        self.ffn = FeedForward(d, c["d_ff"])
        self.ffn_norm = nn.LayerNorm(d, eps=c["layernorm_eps"])
        self.window = c["attention_window"]

    def forward(self, y, memory, tgt_lengths, src_lengths, drop, site):
        y = self.self_attn_norm(y + drop(self.self_attn(y, y, tgt_lengths, causal=True, window=self.window), site))
        y = self.cross_attn_norm(y + drop(self.cross_attn(y, memory, src_lengths), site + 1))
        return self.ffn_norm(y + drop(self.ffn(y, drop, site), site + 2))


class Stack(nn.Module):
    def __init__(self, layers, learned_positions, c):
        super().__init__()
        self.layers = nn.ModuleList(layers)
        if learned_positions:
            self.positions = nn.Embedding(c["max_positions"], c["d_model"])


class Transformer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        learned = c["positions"] == "learned"
        self.embedding = nn.Embedding(c["vocab_size"], c["d_model"])
        self.encoder = Stack([EncoderLayer(c) for _ in range(c["encoder_layers"])], learned, c)
        self.decoder = Stack([DecoderLayer(c) for _ in range(c["decoder_layers"])], learned, c)
        self.register_buffer("sinusoids", sinusoids(c["max_positions"], c["d_model"]), persistent=False)

    def embed(self, ids, stack):
        T = ids.shape[1]
        pos = stack.positions.weight[:T] if hasattr(stack, "positions") else self.sinusoids[:T]
        return self.embedding(ids) * math.sqrt(self.c["d_model"]) + pos

    def forward(self, src, src_lengths, tgt_in, tgt_lengths, drop=NO_DROPOUT):
        x = drop(self.embed(src, self.encoder), 1)
        for l, layer in enumerate(self.encoder.layers):
            x = layer(x, src_lengths, drop, Dropout.ENCODER_BASE + Dropout.PER_LAYER * l)
        y = drop(self.embed(tgt_in, self.decoder), 2)
        for l, layer in enumerate(self.decoder.layers):
            y = layer(y, x, tgt_lengths, src_lengths, drop, Dropout.DECODER_BASE + Dropout.PER_LAYER * l)
        return y @ self.embedding.weight.T  # the shared pre-softmax projection


def worst_of(a, b):
    """The larger error, a NaN being the worst (max() keeps whichever comes first)."""
    return b if math.isnan(b) or b >= a else a


def main(directory):
    config = json.load(open(f"{directory}/config.json"))
    batch = json.load(open(f"{directory}/batch.json"))
    model = Transformer(config).double()
    model.load_state_dict(read_safetensors(f"{directory}/model.safetensors"), strict=True)
    B, S, T = batch["batch"], batch["src_len"], batch["tgt_len"]
    t = lambda k, *shape: torch.tensor(batch[k], dtype=torch.long).view(*shape)
    inputs = t("src", B, S), t("src_lengths", B), t("tgt_in", B, T), t("tgt_lengths", B)
    drop = Dropout(config["dropout"], batch.get("dropout_seed", 0), config.get("activation_dropout", 0))
    logits = model(*inputs, drop)
    loss = F.cross_entropy(logits.reshape(-1, config["vocab_size"]), t("tgt_out", B * T), ignore_index=0,
                           label_smoothing=config["label_smoothing"], reduction="sum") / batch["tokens"]
    loss.backward()
    attention_modules = [l.self_attn for l in model.encoder.layers] + \
                        [m for l in model.decoder.layers for m in (l.self_attn, l.cross_attn)]
    print(f"case {batch.get('case', '?')}: dropout {drop.rate:g}, window {config['attention_window']}, "
          f"{sum(m.rows_without_keys for m in attention_modules)} query rows without a key (summed over layers), "
          f"output layer in blocks of {batch.get('logits_block_rows') or B * T} of {B * T} rows, "
          f"{drop.dropped} of {drop.elements} elements dropped" +
          (f", activation dropout {drop.hidden.rate:g}: {drop.hidden.dropped} of {drop.hidden.elements} hidden "
           "elements dropped" if drop.hidden else ""))
    ours = read_safetensors(f"{directory}/grads.safetensors")
    failures = []
    # JSON has no NaN: parity_dump writes a NaN loss as null.
    attn_loss = math.nan if batch["loss"] is None else batch["loss"]
    loss_err = abs(loss.item() - attn_loss) / abs(loss.item())
    print(f"loss: torch {loss.item():.10f}  attn {attn_loss:.10f}  relative error {loss_err:.2e}")
    if not loss_err < 1e-4:
        failures.append(f"loss (relative error {loss_err:.2e})")
    worst = 0.0
    for name, p in model.named_parameters():
        ref = p.grad
        err = ((ours[name] - ref).norm() / ref.norm().clamp_min(1e-30)).item()
        # The key bias's true gradient is 0 (softmax ignores a constant per row): compare absolutely.
        if name.endswith("k_proj.bias"):
            err = (ours[name] - ref).abs().max().item()
        worst = worst_of(worst, err)
        if not err < 1e-4:
            failures.append(f"{name} (relative error {err:.2e})")
    print(f"{len(ours)} gradient tensors, worst relative error {worst:.2e}")
    # Attention export: the weights attn reports are softmax(QK^T/sqrt(d_k)) under the masks, for
    # every layer and head, on every real query row (padded query rows are never exported). The
    # padding keys must be exactly 0. Probabilities are at most 1: compare absolutely.
    # attn exports the weights of a pass without dropout.
    if drop.rate > 0 or drop.hidden:
        with torch.no_grad():
            model(*inputs)
    exported = read_safetensors(f"{directory}/attention.safetensors")
    src_len, tgt_len = batch["src_lengths"], batch["tgt_lengths"]
    sites = [("encoder_self", [l.self_attn for l in model.encoder.layers], src_len, src_len),
             ("decoder_self", [l.self_attn for l in model.decoder.layers], tgt_len, tgt_len),
             ("cross", [l.cross_attn for l in model.decoder.layers], tgt_len, src_len)]
    worst_attention = 0.0
    for site, modules, q_len, k_len in sites:
        for layer, module in enumerate(modules):
            name = f"{site}.{layer}"
            if name not in exported:
                failures.append(f"attention {name} not exported")
                continue
            ours_p, ref_p = exported[name], module.probs.detach()
            if tuple(ours_p.shape) != tuple(ref_p.shape):
                failures.append(f"attention {name}: shape {tuple(ours_p.shape)} != {tuple(ref_p.shape)}")
                continue
            for b in range(B):
                err = (ours_p[b, :, :q_len[b]] - ref_p[b, :, :q_len[b]]).abs().max().item()
                pad = ours_p[b, :, :q_len[b], k_len[b]:].abs().max().item() if k_len[b] < ours_p.shape[3] else 0.0
                worst_attention = worst_of(worst_attention, err)
                if not (err < 1e-5 and pad == 0.0):
                    failures.append(f"attention {name} sentence {b} (error {err:.2e}, padding {pad:.2e})")
    print(f"{len(exported)} attention tensors, worst absolute error {worst_attention:.2e}")
    if failures:
        print("FAILED:", ", ".join(failures))
        sys.exit(1)
    print("PASSED: attn matches the PyTorch reference")


if __name__ == "__main__":
    torch.set_num_threads(2)
    main(sys.argv[1])
