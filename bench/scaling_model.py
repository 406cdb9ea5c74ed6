#!/usr/bin/env python3
"""The scaling model of docs/distributed.md: efficiency of synchronous data parallelism on N nodes.

  bench/scaling_model.py --preset small:7577600:1.60 --preset base:48234496:S [--speedup 1,16]

Each --preset is NAME:PARAMETERS:SECONDS, SECONDS being the measured compute time of one update
of a node's share of the batch (bench/distributed_train.sh, 1x2 on this machine). Per update a
ring allreduce of the fp32 gradient moves 2(N-1)/N x 4P bytes through each node's link and takes
2(N-1) latency steps:  T_ar = 2(N-1)/N * 4P / bandwidth + 2(N-1) * latency.
Without overlap an update takes T_c + T_ar (efficiency T_c / (T_c + T_ar)); with the allreduce
overlapped with the backward pass (buckets), only what does not fit behind the backward pass
(2/3 of T_c) is added. --speedup scales T_c down for nodes that many times faster than this one.
"""
import argparse

p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
p.add_argument("--preset", action="append", required=True)
p.add_argument("--speedup", default="1,16,100")
p.add_argument("--latency-us", type=float, default=50.0)
a = p.parse_args()
networks = [("10 Gb/s", 10e9 / 8), ("100 Gb/s", 100e9 / 8)]
print(f"latency {a.latency_us:.0f} us per ring step; E = efficiency without overlap / with overlap (bf16 gradients: half the bytes)")
print(f"{'preset':6s} {'node':>6s} {'T_c s':>7s} {'network':>9s} " + " ".join(f"{'N=' + str(n):>24s}" for n in (2, 8, 64)))
for spec in a.preset:
    name, params, seconds = spec.split(":")
    params, seconds = int(params), float(seconds)
    for speed in [float(x) for x in a.speedup.split(",")]:
        tc = seconds / speed
        for net, bw in networks:
            cells = []
            for n in (2, 8, 64):
                def t_ar(bytes_per_param):
                    return 2 * (n - 1) / n * bytes_per_param * params / bw + 2 * (n - 1) * a.latency_us * 1e-6
                plain = tc / (tc + t_ar(4))
                overlap = tc / (tc + max(0.0, t_ar(4) - 2 / 3 * tc))
                half = tc / (tc + t_ar(2))
                cells.append(f"{t_ar(4) * 1000:6.0f}ms {plain:4.0%}/{overlap:4.0%}/{half:4.0%}")
            print(f"{name:6s} {speed:5.0f}x {tc:7.3f} {net:>9s} " + " ".join(f"{c:>24s}" for c in cells))
