"""Time the generator, validation and a save/load round trip on a rail-optimized design (DGX H100
with BlueField-3 in place of the NICs), in CPU seconds (``time.process_time``: the machine is
shared, and CPU time is what a busy machine does not inflate).

Run: ``python bench/bench_templates.py [--servers N]`` (default 2,048 servers = 16,384 GPUs;
16384 for 131k GPUs, where issue 15 wants the whole ``new`` under 5 s).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from designer.topology import fileformat
from designer.topology.catalog import load_catalog
from designer.topology.templates import rail_optimized
from designer.topology.validation import validate


def _timed(label: str, fn):
    start = time.process_time()
    value = fn()
    print(f"{label:<42} {time.process_time() - start:6.2f} s CPU", flush=True)
    return value


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--servers", type=int, default=2048)
    servers = ap.parse_args().servers
    catalog = load_catalog()
    design = _timed(f"generate rail-optimized, {servers} x DGX H100 + BF-3",
                    lambda: rail_optimized(servers=servers, dpu="bluefield-3", catalog=catalog))
    topo = design.topology
    gpus = sum(int(catalog.resolve(s)["gpu_count"]) for s in topo.servers())
    print(f"  {gpus} GPUs, {len(topo.components)} components, {len(topo.links)} links")
    problems = _timed("validate", lambda: validate(design, catalog))
    print(f"  {len(problems)} problems")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.json"
        _timed("save", lambda: fileformat.save(design, path))
        print(f"  {path.stat().st_size / 1e6:.1f} MB")
        loaded = _timed("load", lambda: fileformat.load(path))
    assert loaded == design


if __name__ == "__main__":
    main()
