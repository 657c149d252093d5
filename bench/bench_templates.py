"""Time the generators, validation and a save/load round trip on a 16,384-GPU rail-optimized design.

Run: ``python bench/bench_templates.py`` (target: generation under 5 s on the 2-core dev machine).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from designer.topology import fileformat
from designer.topology.catalog import load_catalog
from designer.topology.templates import rail_optimized
from designer.topology.validation import validate


def _timed(label: str, fn):
    start = time.perf_counter()
    value = fn()
    print(f"{label:<42} {time.perf_counter() - start:6.2f} s")
    return value


def main() -> None:
    catalog = load_catalog()
    design = _timed("generate rail-optimized, 2048 x DGX H100 + BF-3",
                    lambda: rail_optimized(servers=2048, dpu="bluefield-3", catalog=catalog))
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
