"""Issue #23 hostile input: a 30,000-deep parent chain (and one that ends in a long loop) is
checked in linear time, and the loops are those a walk by hand finds."""

import time

from designer.topology.model import Component, Topology
from designer.topology.validation import placement_loops, validate


def _chain(n: int, loop_from: int | None = None) -> dict[str, str]:
    """c0 -> c1 -> ... -> c(n-1), which points back at c(loop_from) when given."""
    parents = {f"c{i}": f"c{i + 1}" for i in range(n - 1)}
    if loop_from is not None:
        parents[f"c{n - 1}"] = f"c{loop_from}"
    return parents


def test_loops_of_a_parent_map_are_each_found_once_from_their_first_member():
    parents = {"a": "b", "b": "c", "c": "a", "d": "a", "e": "f", "f": "e", "g": "g", "h": "x"}
    assert placement_loops(parents) == [["a", "b", "c"], ["e", "f"], ["g"]]
    # the first member in the map's order starts the loop, wherever the walk entered it
    assert placement_loops({"q": "p", "p": "r", "r": "p"}) == [["p", "r"]]
    assert placement_loops(_chain(1000)) == []
    assert placement_loops(_chain(1000, loop_from=990)) == [[f"c{i}" for i in range(990, 1000)]]


class _Counted(dict):
    """A parent map that counts the look-ups of a parent."""

    looked = 0

    def get(self, key, default=None):
        self.looked += 1
        return super().get(key, default)


def test_a_30000_deep_chain_is_walked_in_linear_time():
    for n in (30_000, 120_000):
        parents = _Counted(_chain(n, loop_from=n - 1000))
        t = time.perf_counter()
        loops = placement_loops(parents)
        took = time.perf_counter() - t
        assert [len(c) for c in loops] == [1000]
        # each component's parent looked up once (a walk from every member: n * n / 2)
        assert parents.looked <= n, (n, parents.looked)
        assert took < 2.0


def test_validate_names_the_loop_at_the_end_of_a_deep_chain_quickly():
    n = 30_000
    comps = [Component(f"nic-{i}", "nic", "connectx-7", parent=f"nic-{i + 1}" if i < n - 1 else "nic-29990")
             for i in range(n)]
    topo = Topology.from_items(comps, [])
    t = time.perf_counter()
    problems = validate(topo)
    took = time.perf_counter() - t
    loops = [p for p in problems if p.message.startswith("placement loops")]
    assert [p.component for p in loops] == ["nic-29990"]
    assert loops[0].message == "placement loops: " + " -> ".join(
        [f"nic-{i}" for i in range(29_990, n)] + ["nic-29990"])
    assert took < 5.0
