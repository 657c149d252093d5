"""Points per second of a sweep (designer.services.sweeping, run by
designer.services.parallel.run_tasks) at 1 worker (in this process), on the local pool at 2
workers, and on a local Dask cluster of 2 worker processes that this bench starts.

    PYTHONPATH=. python bench/bench_sweep.py [--values 512,768,...] [--param servers] [FILE]
    PYTHONPATH=. python bench/bench_sweep.py --param servers --values 4,8 --param scenario.tenants --values 1,2,3

Each point is three engine runs (host, SmartNIC, DPU); every row streams to a CSV file in a
temporary folder (``designer.services.rowfile``, as ``sweep --out`` writes it) and the three
files must be the same bytes. Each figure is the whole sweep, start-up of the pool's workers
included (that is what a user waits for); the Dask cluster's own start is not counted (a user's
cluster is already running). The machine this runs on is shared with other work: quote the
figures as this run's, not as the code's ceiling.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).absolute().parent.parent))


def main() -> None:
    from designer.commands.sweep import columns
    from designer.engine.compare import MODES
    from designer.engine.sweep import METRICS, make_grid, parse_values
    from designer.paths import resources_dir
    from designer.services.rowfile import row_file
    from designer.services.sweeping import sweep
    from designer.topology.fileformat import load

    ap = argparse.ArgumentParser()
    ap.add_argument("file", nargs="?", default=str(resources_dir() / "examples" / "example.json"))
    ap.add_argument("--param", action="append")
    ap.add_argument("--values", action="append")
    args = ap.parse_args()
    params = args.param or ["servers"]
    values = args.values or ["512,768,1024,1280,1536,1792,2048,2304"]
    grid = make_grid(params, [parse_values(v) for v in values])
    design = load(args.file)
    print(f"sweep of {grid.words()} = {grid.size} points of {Path(args.file).name} "
          "(each point: host, SmartNIC, DPU; rows to CSV); machine shared with other work")
    files = {}
    folder = Path(tempfile.mkdtemp(prefix="bench_sweep."))

    def run(name: str, **where) -> None:
        out = folder / f"{len(files)}.csv"
        with row_file(str(out), columns(grid.params)) as rows:
            t = time.perf_counter()
            sweep(design, grid, on_point=lambda i, v, row: rows.write(
                list(v) + [row[s][m] for s in MODES for m in METRICS]), **where)
            dt = time.perf_counter() - t
        files[name] = out.read_bytes()
        print(f"{name:24s} {grid.size / dt:6.2f} points/s  ({dt:.2f} s)")

    run("1 worker (in process)", workers=1)
    run("pool, 2 workers", workers=2)
    import distributed

    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as c:
        run("dask, 2 workers", scheduler=c)
    same = len(set(files.values())) == 1
    print("identical rows (CSV bytes) on every executor:", "yes" if same else "NO")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
