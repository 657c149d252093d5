"""Engine solve time and peak memory on rail-optimized designs (run: python bench/bench_engine.py).

Prints, per size: build time of the design (not the engine), first solve (routing + fairness),
re-solve after one link-speed edit (routes cached on the topology structure), peak Python memory
(tracemalloc) of a first solve. The memory is measured on a separate solve of a fresh copy of the
design, because tracemalloc slows every allocation down (about 2x here) and would distort the times.
Then the same design as 8 scattered jobs (``scenario.tenants``): every job's flows solved together,
plus the slowest job alone on the same routes.
"""

from __future__ import annotations

import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from designer.engine.pipeline import run  # noqa: E402
from designer.topology import templates  # noqa: E402
from designer.topology.catalog import load_catalog  # noqa: E402
from designer.topology.model import Link  # noqa: E402


def _two_leaves(design) -> tuple[str, str]:
    leaves = [s.id for s in design.topology.switches("leaf")]
    return leaves[0], leaves[-1]


def bench(gpus: int) -> dict:
    cat = load_catalog()
    t0 = time.perf_counter()
    design = templates.rail_optimized(servers=gpus // 8)
    built = time.perf_counter() - t0
    kw = dict(workload="megatron-gpt-39.1b", tp=8, pp=1, dp=gpus // 8, global_batch=gpus // 8 * 4,
              scenario={"checkpoint_interval_s": 0})
    t0 = time.perf_counter()
    run(design, cat, **kw)
    first = time.perf_counter() - t0
    fresh = templates.rail_optimized(servers=gpus // 8)
    fresh.topology.add_link(Link("bench-extra", *_two_leaves(fresh), "infiniband", 400.0))
    tracemalloc.start()
    run(fresh, cat, **kw)  # a different structure: nothing cached
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    link = next(iter(design.topology.links))
    design.topology.update_link(link, speed_Gbps=design.topology.links[link].speed_Gbps / 2)
    t0 = time.perf_counter()
    run(design, cat, **kw)
    again = time.perf_counter() - t0
    jobs = dict(kw, dp=None, global_batch=gpus // 8 // JOBS * 4,
                scenario={**kw["scenario"], "tenants": JOBS, "tenant_placement": "scattered"})
    t0 = time.perf_counter()
    run(design, cat, **jobs)
    shared = time.perf_counter() - t0
    return {"gpus": gpus, "build_s": built, "solve_s": first, "resolve_after_edit_s": again,
            "peak_MB": peak / 1e6, "links": len(design.topology.links), "jobs_solve_s": shared}


#: jobs of the tenants case
JOBS = 8


if __name__ == "__main__":
    sizes = [int(a) for a in sys.argv[1:]] or [1024, 16384, 131072]
    for n in sizes:
        r = bench(n)
        print(f"{r['gpus']:>7} GPUs  {r['links']:>7} links  build {r['build_s']:7.2f} s  "
              f"solve {r['solve_s']:7.3f} s  re-solve after edit {r['resolve_after_edit_s']:7.3f} s  "
              f"peak {r['peak_MB']:8.1f} MB  {JOBS} scattered jobs {r['jobs_solve_s']:7.3f} s", flush=True)
