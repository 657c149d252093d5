"""Points per second of the design search (designer.services.optimize, run by
designer.services.parallel.run_tasks) at 1 worker (in this process), on the local pool at 2
workers, and on a local Dask cluster of 2 worker processes.

    PYTHONPATH=. python bench/bench_optimize.py [--gpus 1024] [--workload gpt3-175b]

The planner's layouts are found once before the timing (they are the same for every executor);
each figure is the evaluation of the 24 points of the default target, start-up of the workers
included (that is what a user waits for).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).absolute().parent.parent))


def main() -> None:
    from designer.services import optimize as opt
    from designer.services.parallel import run_tasks
    from designer.topology.catalog import load_catalog

    ap = argparse.ArgumentParser()
    ap.add_argument("--gpus", type=int, default=1024)
    ap.add_argument("--workload", default="gpt3-175b")
    args = ap.parse_args()
    catalog = load_catalog()
    target = opt.Target(args.workload, args.gpus)
    t0 = time.perf_counter()
    layouts = opt.plan_layouts(target, catalog)
    print(f"planner layouts: {time.perf_counter() - t0:.2f} s")
    todo = list(opt.points(target, layouts, catalog))
    fronts = {}
    for name in ("1 worker (in process)", "pool, 2 workers", "dask, 2 workers"):
        t = time.perf_counter()
        if name.startswith("dask"):
            import distributed

            with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                          dashboard_address=None) as cluster, distributed.Client(cluster) as c:
                t = time.perf_counter()  # the cluster's start is not the search's
                rows = [r for _, r in run_tasks(opt.evaluate, todo, target, scheduler=c)]
        else:
            rows = [r for _, r in run_tasks(opt.evaluate, todo, target, workers=1 if name.startswith("1") else 2)]
        dt = time.perf_counter() - t
        front = opt.Front()
        for r in rows:
            front.add(r)
        fronts[name] = [r["index"] for r in front.rows]
        print(f"{name:<22} {len(rows)} points in {dt:6.2f} s: {len(rows) / dt:6.2f} points/s")
    print("same front everywhere:", len({tuple(v) for v in fronts.values()}) == 1)


if __name__ == "__main__":
    main()
