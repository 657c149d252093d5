"""Design rules at the file format's size limit (issue 14: "a 250k-component design must validate in
< 15 s"). Run: python bench/bench_validate.py

Three designs of about 250,000 components (``fileformat.MAX_COMPONENTS``), each validated once,
CPU seconds (``time.process_time``):
  chain   250k NICs each placed in the next: one long parent chain ending in a loop (the old
          parent-chain rule walked every chain from every component: quadratic)
  flat    250k components in one rack-less pile, every second one linked to a switch
  rail    the rail-optimized template at 20,448 DGX H100 with BlueField-3 (249,540 components,
          499,039 links: bench_large's design), built without the template's size check
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).absolute().parent.parent))

from designer.topology.catalog import load_catalog  # noqa: E402
from designer.topology.fileformat import MAX_COMPONENTS  # noqa: E402
from designer.topology.model import Component, Link, Topology  # noqa: E402
from designer.topology.templates import TEMPLATES  # noqa: E402
from designer.topology.validation import validate  # noqa: E402


def chain(n: int) -> Topology:
    comps = [Component(f"nic-{i}", "nic", "connectx-7", parent=f"nic-{i + 1}" if i < n - 1 else "nic-0")
             for i in range(n)]
    return Topology.from_items(comps, [])


def flat(n: int) -> Topology:
    comps = [Component("sw-0", "switch", "qm9700")]
    comps += [Component(f"srv-{i}", "gpu_server", "dgx-h100") for i in range(n - 1)]
    links = [Link(f"link-{i}", f"srv-{i}", "sw-0") for i in range(0, n - 1, 2)]
    return Topology.from_items(comps, links)


def main() -> int:
    cat = load_catalog()
    n = MAX_COMPONENTS
    designs = [("chain", lambda: chain(n)), ("flat", lambda: flat(n)),
               ("rail", lambda: TEMPLATES["rail-optimized"].build(servers=20_448, dpu="bluefield-3").topology)]
    for name, make in designs:
        topo = make()
        t0 = time.process_time()
        problems = validate(topo, cat)
        took = time.process_time() - t0
        print(f"{name:6s} {len(topo.components):>8,} components {len(topo.links):>8,} links: "
              f"validate {took:6.2f} s CPU ({len(problems):,} problems){'' if took < 15 else '  OVER 15 s'}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
