"""MoE expert-parallel all-to-all at scale: flow construction (traffic.alltoall_flows), routing
and max-min sharing on a rail-optimized DGX H100 fabric. Issue #12: 16,384 GPUs in under 2 s.

    PYTHONPATH=. python bench/bench_moe.py [SERVERS]

Prints CPU seconds (user+sys of this process) per step; the figures are measured, not asserted."""

import sys
import time

import numpy as np

from designer.engine import network as net
from designer.engine import traffic as tr
from designer.engine import workload as W
from designer.engine.placement import place, servers_of
from designer.topology.catalog import load_catalog
from designer.topology.templates import rail_optimized


def main(servers: int = 2048) -> None:
    cat = load_catalog()
    design = rail_optimized(servers=servers, server="dgx-h100", catalog=cat, storage="none")
    fab = net.fabric_of(design.topology)
    gpus = servers * 8
    # DeepSeek-V3-like layout: PP 16, EP 64 carved out of the data-parallel ranks
    w = W.Workload(layers=64, hidden=7168, heads=128, tp=1, pp=16, dp=gpus // 16, ep=64, experts=256,
                   top_k=8, moe_ffn_hidden=2048, global_batch=gpus // 16)
    pl = place(w, servers_of(design, cat, fab), "tp,dp,pp")
    t0 = time.process_time()
    pl.groups.update(tr.derived_groups(pl, w))
    flows = tr.alltoall_flows(pl, "ep")
    t1 = time.process_time()
    src = np.array([fab.index[s] for s in flows.src])
    dst = np.array([fab.index[s] for s in flows.dst])
    routes = net.route(fab, src, dst, "ecmp", 0)
    t2 = time.process_time()
    sol = net.max_min(routes, net.arc_capacity_GBps(fab, design.topology), flows.demand)
    t3 = time.process_time()
    print(f"{gpus} GPUs, EP 64: {len(flows.src)} flows; build {t1 - t0:.2f} s, route {t2 - t1:.2f} s, "
          f"share {t3 - t2:.2f} s, total {t3 - t0:.2f} s CPU; rail rate median "
          f"{np.median(sol.rate_GBps):.1f} GB/s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2048)
