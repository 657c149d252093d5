"""Time loading a large design file, phase by phase: a 2,048-server rail-optimized design
(DGX H100 + BlueField-3; 24,498 components, 42,016 links, about 7 MB).

Run: ``python bench/bench_load.py [--repeat N] [--servers N]``. Target: whole load under 0.8 s on
the 2-core dev machine, so that the GUI can open such a design in under 3 s in all. CPU seconds
(``time.process_time``, the best of N): the machine is shared, and CPU time is what a busy machine
inflates least.

Measured (2 shared cores): 2.62 s before the item check was compiled (jsonschema on every item took
1.78 s of it); 0.69-0.75 s after, of which about 0.4 s is building the Topology. Issue 20 (one
decoder, msgspec), CPU seconds of ``fileformat.load`` in-process, min of 15 runs, the code before
the issue and after it alternating three times on the same loaded machine: 16k GPUs (this file)
0.165-0.180 s before, 0.140-0.154 s after; 131k GPUs (``--servers 16384``, 66 MB, min of 4)
1.83-2.00 s before, 1.60-1.65 s after. ``dumps``: 0.161-0.164 s and 0.158-0.167 s at 16k.
"""

from __future__ import annotations

import argparse
import gc
import tempfile
import time
from pathlib import Path

from designer.topology import fileformat
from designer.topology.catalog import load_catalog
from designer.topology.templates import rail_optimized


def _best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per phase; the best is shown")
    parser.add_argument("--servers", type=int, default=2048, help="servers of the rail design (8 GPUs each)")
    args = parser.parse_args()
    design = rail_optimized(servers=args.servers, dpu="bluefield-3", catalog=load_catalog())
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"rail-{args.servers}.json"
        fileformat.save(design, path)
        raw = path.read_bytes()
        decoded = fileformat._DECODER.decode(raw)
        print(f"{len(design.topology.components)} components, {len(design.topology.links)} links, "
              f"{len(raw) / 1e6:.1f} MB (CPU s, best of {args.repeat})")
        phases = [
            ("read the bytes", path.read_bytes),
            ("decode (msgspec, typed)", lambda: fileformat._DECODER.decode(raw)),
            ("columns", lambda: fileformat._columns(decoded)),
            ("members of the text", lambda: fileformat._text_members(raw)),
            ("checks + objects", lambda: fileformat._built(decoded, fileformat._columns(decoded), "f", text=True)),
            ("whole load()", lambda: fileformat.load(path)),
            ("whole dumps()", lambda: fileformat.dumps(design)),
        ]
        for label, fn in phases:
            print(f"  {label:<30} {_best(fn, args.repeat):6.3f} s")
        assert fileformat.load(path) == design


if __name__ == "__main__":
    main()
