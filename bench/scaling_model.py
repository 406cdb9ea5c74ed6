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

  bench/scaling_model.py --measured base-1gbit:48234496:3.46:0.117:0.65 [--accumulate 1,4]

Each --measured is NAME:PARAMETERS:T_C:BUS_GB_PER_S[:E2]: the compute time of one update on one
node, the bus bandwidth the all-reduce reached alone between 2 nodes (build/bench/allreduce_bench
under scripts/nodes run), and optionally the efficiency measured in training with 2 nodes. It
prints the model's efficiency (no overlap) for 2, 4, 8 and 16 nodes, each accumulation K (T_c
times K), with the measured E2 beside N=2 and how far apart the two are.
"""
import argparse

p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
p.add_argument("--preset", action="append", default=[])
p.add_argument("--measured", action="append", default=[])
p.add_argument("--accumulate", default="1")
p.add_argument("--speedup", default="1,16,100")
p.add_argument("--latency-us", type=float, default=50.0)
a = p.parse_args()
if not a.preset and not a.measured:
    p.error("give --preset or --measured")
if a.measured:
    print(f"latency {a.latency_us:.0f} us per ring step; efficiency without overlap: T_c K / (T_c K + T_ar(N))")
    print(f"{'run':16s} {'K':>3s} {'T_c K s':>8s} " + " ".join(f"{'N=' + str(n):>14s}" for n in (2, 4, 8, 16)) + "  measured N=2")
    for spec in a.measured:
        fields = spec.split(":")
        name, params, tc, bus = fields[0], int(fields[1]), float(fields[2]), float(fields[3]) * 1e9
        e2 = float(fields[4]) if len(fields) > 4 else None
        for k in [int(x) for x in a.accumulate.split(",")]:
            cells = []
            for n in (2, 4, 8, 16):
                t_ar = 2 * (n - 1) / n * 4 * params / bus + 2 * (n - 1) * a.latency_us * 1e-6
                cells.append(f"{t_ar * 1000:6.0f}ms {tc * k / (tc * k + t_ar):5.0%}")
            model2 = tc * k / (tc * k + 4 * params / bus + 2 * a.latency_us * 1e-6)
            seen = f"  {e2:.0%} (model {model2 / e2 - 1:+.0%})" if e2 is not None and k == 1 else ""
            print(f"{name:16s} {k:3d} {tc * k:8.2f} " + " ".join(f"{c:>14s}" for c in cells) + seen)
    if not a.preset:
        raise SystemExit(0)
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
