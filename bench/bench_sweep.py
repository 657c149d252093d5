"""Points per second of a sweep (designer.services.sweeping, run by
designer.services.parallel.run_tasks) at 1 worker (in this process), on the local pool at 2
workers, and on a local Dask cluster of 2 worker processes.

    PYTHONPATH=. python bench/bench_sweep.py [--values 512,768,...] [--param servers] [FILE]

Each point is three engine runs (host, SmartNIC, DPU). Each figure is the whole sweep, start-up of
the pool's workers included (that is what a user waits for); the Dask cluster's own start is not
counted (a user's cluster is already running). The machine this runs on is shared with other
work: quote the figures as this run's, not as the code's ceiling.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).absolute().parent.parent))


def main() -> None:
    from designer.engine.sweep import parse_values
    from designer.paths import resources_dir
    from designer.services.sweeping import sweep
    from designer.topology.fileformat import load

    ap = argparse.ArgumentParser()
    ap.add_argument("file", nargs="?", default=str(resources_dir() / "examples" / "example.json"))
    ap.add_argument("--param", default="servers")
    ap.add_argument("--values", default="512,768,1024,1280,1536,1792,2048,2304")
    args = ap.parse_args()
    design = load(args.file)
    values = parse_values(args.values)
    print(f"sweep of {args.param} over {len(values)} values of {Path(args.file).name} "
          "(each point: host, SmartNIC, DPU); machine shared with other work")
    results = {}
    for name in ("1 worker (in process)", "pool, 2 workers", "dask, 2 workers"):
        if name.startswith("dask"):
            import distributed

            with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                          dashboard_address=None) as cluster, distributed.Client(cluster) as c:
                t = time.perf_counter()  # the cluster's start is not the sweep's
                results[name] = sweep(design, args.param, values, scheduler=c)
                dt = time.perf_counter() - t
        else:
            t = time.perf_counter()
            results[name] = sweep(design, args.param, values, workers=1 if name.startswith("1") else 2)
            dt = time.perf_counter() - t
        print(f"{name:24s} {len(values) / dt:6.2f} points/s  ({dt:.2f} s)")
    same = len({repr(r.to_json()) for r in results.values()}) == 1
    print("identical results on every executor:", "yes" if same else "NO")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
