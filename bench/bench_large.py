"""A 250k-component design end to end: validate, report, export, screenshot (issue #14 targets:
validate < 15 s, report < 60 s, screenshot < 30 s on the 2-core dev machine).

The design is rail-optimized (DGX SuperPOD style: SUs of 32 servers, one leaf per rail, three tiers)
with 20,448 DGX H100 servers and BlueField-3 DPUs (~250k components, ~82 MiB), built by
``templates.rail_optimized`` in a child process and saved to a file; every step then runs as its own
``dpu-designer`` process, as a user would run it. Each is measured as wall time, CPU time (user +
sys, from ``wait4``: less noisy on a shared machine) and peak memory (the children are started from
a small parent, so their peak is their own).

The loader's limits (``fileformat.MAX_FILE_BYTES``, ``MAX_COMPONENTS``) may refuse such a file;
``--lift-limits`` (the default) raises them inside the measured processes only, and says so.

Run: ``python bench/bench_large.py [--servers N] [--keep DIR] [--only validate,report,...]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGETS_S = {"validate": 15.0, "report": 60.0, "screenshot": 30.0}


def timed(argv: list[str], env: dict) -> tuple[int, float, float, float, str]:
    """Run ``argv``; (exit code, wall s, CPU s, peak RSS MiB, last stderr line)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode("utf-8", "replace").strip().splitlines() if proc.stderr else []
    code = os.waitstatus_to_exitcode(status)
    proc.returncode = code
    return code, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, (err[-1] if err else "")


def build(servers: int, path: Path) -> int:
    from designer.topology import fileformat
    from designer.topology.catalog import load_catalog
    from designer.topology.templates import rail_optimized

    start = time.perf_counter()
    from designer.services.workloads import fitted_workload
    from designer.topology.templates import suggested_workload

    catalog = load_catalog()
    design = rail_optimized(servers=servers, dpu="bluefield-3", catalog=catalog)
    # the workload `dpu-designer new` gives: the suggested preset filling the design
    design.workload = fitted_workload(suggested_workload(design), design, catalog)
    # ``save`` refuses a file the loader would refuse: lifted here as in the measured processes
    fileformat.MAX_FILE_BYTES, fileformat.MAX_COMPONENTS = 1 << 30, 10 ** 7
    fileformat.save(design, path)
    n = len(design.topology.components)
    print(f"design: {servers:,} servers, {n:,} components, {len(design.topology.links):,} links, "
          f"{path.stat().st_size / 2**20:.0f} MiB (built and saved in {time.perf_counter() - start:.1f} s)")
    return n


#: the CLI with the loader's limits raised (``--keep-limits`` runs ``python -m designer.cli``)
LIFTED = ("import sys; from designer.topology import fileformat as f; "
          "f.MAX_FILE_BYTES = 1 << 30; f.MAX_COMPONENTS = 10 ** 7; "
          "from designer.cli import main; sys.argv[0] = 'dpu-designer'; sys.exit(main(sys.argv[1:]))")


def main() -> None:
    if sys.argv[1:2] == ["--build"]:
        build(int(sys.argv[2]), Path(sys.argv[3]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=20448, help="servers (default 20,448: ~250k components)")
    parser.add_argument("--keep-limits", action="store_true",
                        help="measure with the loader's file-size and component limits as they are")
    parser.add_argument("--keep", metavar="DIR", help="write the design and outputs here and keep them")
    parser.add_argument("--only", default="validate,report,export,screenshot", help="steps to run")
    args = parser.parse_args()
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-large-"))
    folder.mkdir(parents=True, exist_ok=True)
    design = folder / f"rail-{args.servers}.json"
    if not design.exists():  # in a child, so that this process stays small (see the docstring)
        subprocess.run([sys.executable, __file__, "--build", str(args.servers), str(design)], check=True)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    cli = [sys.executable, "-m", "designer.cli"]
    if not args.keep_limits:
        from designer.topology import fileformat

        size = design.stat().st_size
        if size > fileformat.MAX_FILE_BYTES:
            print(f"note: the loader's limit is {fileformat.MAX_FILE_BYTES / 2**20:.0f} MiB and "
                  f"{fileformat.MAX_COMPONENTS:,} components; lifted in the measured processes "
                  f"(the file is {size / 2**20:.0f} MiB)")
        cli = [sys.executable, "-c", LIFTED]
    steps = {
        "validate": cli + ["validate", str(design)],
        "report": cli + ["report", str(design), "-o", str(folder / "report.pdf")],
        "export": cli + ["export", str(design), "--cabling", str(folder / "cabling.csv"),
                         "--bom", str(folder / "bom.csv")],
        "screenshot": cli + [str(design), "--screenshot", str(folder / "shot.png")],
    }
    for name in args.only.split(","):
        code, wall, cpu, rss, last = timed(steps[name], env)
        target = TARGETS_S.get(name)
        met = code == 0 and wall < target if target else False
        verdict = "" if target is None else f" (target < {target:g} s: {'met' if met else 'MISSED'})"
        print(f"{name:<11} exit {code}  wall {wall:6.1f} s  CPU {cpu:6.1f} s  peak {rss:6.0f} MiB{verdict}"
              + (f"  [{last}]" if code else ""))
    if not args.keep:
        for p in folder.iterdir():
            p.unlink()
        folder.rmdir()


if __name__ == "__main__":
    main()
