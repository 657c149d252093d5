"""Time loading a large design file, phase by phase: a 2,048-server rail-optimized design
(DGX H100 + BlueField-3; 24,498 components, 42,016 links, about 7 MB).

Run: ``python bench/bench_load.py [--repeat N]``. Target: whole load under 0.8 s on the 2-core dev
machine, so that the GUI can open such a design in under 3 s in all.

Measured (2 shared cores): 2.62 s before the item check was compiled (jsonschema on every item took
1.78 s of it); 0.69-0.75 s after, of which about 0.4 s is building the Topology.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from designer.topology import fileformat
from designer.topology.catalog import load_catalog
from designer.topology.templates import rail_optimized


def _best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per phase; the best is shown")
    args = parser.parse_args()
    design = rail_optimized(servers=2048, dpu="bluefield-3", catalog=load_catalog())
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rail-2048.json"
        fileformat.save(design, path)
        text = path.read_text(encoding="utf-8")
        data = json.loads(text)
        print(f"{len(design.topology.components)} components, {len(design.topology.links)} links, "
              f"{path.stat().st_size / 1e6:.1f} MB (best of {args.repeat})")
        phases = [
            ("read + parse JSON", lambda: json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=
                                                     fileformat._object, parse_constant=fileformat._reject_constant)),
            ("depth / NaN walk", lambda: fileformat._check_tree(data)),
            ("structure (schema)", lambda: fileformat._schema_errors(data)),
            ("meaning (ids, ends, parents)", lambda: fileformat._semantic_errors(data)),
            ("whole load()", lambda: fileformat.load(path)),
        ]
        for label, fn in phases:
            print(f"  {label:<30} {_best(fn, args.repeat):6.3f} s")
        assert fileformat.load(path) == design and text


if __name__ == "__main__":
    main()
