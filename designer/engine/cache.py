"""What the engine keeps between runs, in an object the caller owns (no process-wide state).

An :class:`EngineCache` holds the :class:`~designer.engine.network.Fabric` s last made (each keeps
its own routing tables and the routes of the flow sets last solved on it) and, for the topologies
last asked about, which of them belongs to which topology at which ``Topology.version``. The
caller decides how long it lives: the command line makes one per command (``pipeline.run`` makes
a fresh one when given none, so a lone run shares nothing), the GUI's document keeps one for as
long as the design is open, ``plan.search_steps`` and ``compare`` share one over their runs.
Nothing here is keyed by ``id()``: a topology is remembered through a weak reference and found by
identity (``is``), so a topology that is gone is never mistaken for a new one at the same address.

Why the version is enough: a Fabric depends only on the topology's structure (component ids and
kinds, link ids and ends). Components and links are immutable (``designer.topology.model``), so
that structure changes only through the Topology's methods, each of which bumps ``version``.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from designer.engine.network import Fabric
    from designer.topology.model import Topology

#: Fabrics kept (most recent last): a design and a few variants of it (the GUI's undo, a sweep)
FABRICS = 4
#: topologies whose Fabric at a version is remembered
TOPOLOGIES = 8


class EngineCache:
    """Fabrics by structure, and the Fabric of a topology at a version (see the module text).

    Safe to share between the GUI's worker thread and its main thread: the lists are replaced
    under a lock, and the version is read before the structure (an edit made meanwhile leaves the
    Fabric remembered under the version before it, so the next call reads the topology again)."""

    def __init__(self, fabrics: int = FABRICS, topologies: int = TOPOLOGIES) -> None:
        if fabrics < 1 or topologies < 1:
            raise ValueError(f"an EngineCache keeps at least one fabric and one topology, "
                             f"not {fabrics} and {topologies}")
        self._size = (fabrics, topologies)
        self._fabrics: list[Fabric] = []
        #: (weak references to a topology and to its Fabric, the topology's version then): weak,
        #: so that only ``_fabrics`` keeps a Fabric alive (a 131k-GPU one with its routes is
        #: hundreds of MB) and a topology that is gone is never taken for a new one
        self._seen: list[tuple[weakref.ref[Topology], weakref.ref[Fabric], int]] = []
        self._lock = threading.Lock()

    def fabric(self, topology: Topology) -> Fabric:
        """The Fabric of ``topology``: the one last given for this topology object at its current
        ``version``; else a kept one made of equal structure lists (list ``==`` compares the same
        string objects by address: a few ms at 131k GPUs); else a new one, which is kept."""
        from designer.engine import network as net

        version = topology.version
        fab = self._known(topology, version)
        if fab is None:
            lists, links = net.structure(topology)
            with self._lock:
                fab = next((f for f in reversed(self._fabrics) if f.structure == lists), None)
            if fab is None:
                fab = net.new_fabric(lists, links)
        self._note(topology, fab, version)
        return fab

    def fabrics(self) -> list[Fabric]:
        """The Fabrics kept, most recent last (for tests and diagnostics)."""
        with self._lock:
            return list(self._fabrics)

    def clear(self) -> None:
        """Forget everything (a document closed, or memory wanted back)."""
        with self._lock:
            self._fabrics, self._seen = [], []

    def _known(self, topology: Topology, version: int) -> Fabric | None:
        with self._lock:
            for ref, fab, seen_version in self._seen:
                if ref() is topology:
                    return fab() if seen_version == version else None
        return None

    def _note(self, topology: Topology, fab: Fabric, version: int) -> None:
        keep_fabrics, keep_topologies = self._size
        with self._lock:
            seen = [s for s in self._seen if s[0]() is not None and s[0]() is not topology]
            self._seen = (seen + [(weakref.ref(topology), weakref.ref(fab), version)])[-keep_topologies:]
            self._fabrics = ([f for f in self._fabrics if f is not fab] + [fab])[-keep_fabrics:]
