"""Points per second of the design search (designer.services.optimize) in this process, on the
local pool at 1 and 2 workers, and on an in-process Dask cluster of 2 workers.

    PYTHONPATH=. python bench/bench_optimize.py [--gpus 1024] [--workload gpt3-175b]

The planner's layouts are found once before the timing (they are the same for every executor);
each figure is the evaluation of the 24 points of the default target.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).absolute().parent.parent))


def main() -> None:
    from designer.services import optimize as opt
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
    todo = opt.points(target, layouts, catalog)
    fronts = {}
    for name, kw in (("in process", {"workers": 1}), ("pool, 1 worker", {"workers": 1}),
                     ("pool, 2 workers", {"workers": 2}), ("dask, 2 workers", None)):
        if kw is None:
            import distributed

            with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                          dashboard_address=None) as cluster, distributed.Client(cluster) as c:
                t = time.perf_counter()
                rows = list(opt.run_points(todo, target, scheduler=c))
        else:
            if name.startswith("pool"):
                import concurrent.futures as cf  # noqa: F401 - the pool even at one worker
                kw = {"workers": kw["workers"] if kw["workers"] > 1 else 1}
            t = time.perf_counter()
            rows = list(opt.run_points(todo, target, **kw)) if name != "pool, 1 worker" else \
                list(_pool(todo, target))
        dt = time.perf_counter() - t
        front = opt.Front()
        for r in rows:
            front.add(r)
        fronts[name] = [r["index"] for r in front.rows]
        print(f"{name:<18} {len(rows)} points in {dt:6.2f} s: {len(rows) / dt:6.2f} points/s")
    print("same front everywhere:", len({tuple(v) for v in fronts.values()}) == 1)


def _pool(todo, target):
    import concurrent.futures as cf
    import multiprocessing

    from designer.services import optimize as opt

    with cf.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                                initializer=opt._init_worker, initargs=(target,)) as pool:
        yield from pool.map(opt._pool_task, todo)


if __name__ == "__main__":
    main()
