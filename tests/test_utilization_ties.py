"""Where a result picks the higher of two utilizations (a link's busiest phase, the uplinks at most
half as busy as the bottleneck), equal figures give or take rounding are one figure
(``network.UTIL_TIE``): max-min works a rate out as its arc's level, so two phases that both fill a
link read 1 within a few ulps either way, and the pick must not follow the ulps."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from designer.engine import bottlenecks, network as net, pipeline
from designer.topology.templates import rail_optimized

ULPS = (-3, -1, 0, 1, 3)


def _nudge(x: float, ulps: int) -> float:
    for _ in range(abs(ulps)):
        x = float(np.nextafter(x, np.inf if ulps > 0 else -np.inf))
    return x


def _solution(util: list[float]) -> net.Solution:
    cap = np.full(len(util), 50.0)
    return net.Solution(np.zeros(0), np.array(util) * cap, cap, np.full(0, -1), 1,
                        np.array(util, dtype=float))


def _phase(util: list[float]):
    sol = _solution(util)
    return SimpleNamespace(sol=sol, solved=lambda: (None, sol))


@pytest.mark.parametrize("ulps", ULPS)
def test_a_link_two_phases_fill_is_the_first_phase_s_whatever_the_rounding(ulps):
    fab = SimpleNamespace(link_ids=["l0", "l1", "l2"])
    # arcs 0-2 one direction of links l0-l2, arcs 3-5 the other
    dp = _phase([1.0, 0.3, 0.0, 0.0, 0.0, 0.0])
    pp = _phase([_nudge(1.0, ulps), 0.6, 0.0, 0.0, 0.0, 0.2])
    links = pipeline._link_results(fab, None, {"dp": dp, "pp": pp})
    assert links.phase == ["dp", "pp", "pp"]
    assert links.utilization.tolist() == pytest.approx([1.0, 0.6, 0.2], rel=1e-15)


def test_a_phase_a_little_busier_than_rounding_is_the_busiest():
    fab = SimpleNamespace(link_ids=["l0"])
    links = pipeline._link_results(fab, None, {"dp": _phase([0.5, 0.0]), "pp": _phase([0.5 + 1e-6, 0.0])})
    assert links.phase == ["pp"]


@pytest.fixture(scope="module")
def leaf():
    topo = rail_optimized(servers=64).topology
    fab = net.fabric_of(topo)
    s = int(np.flatnonzero(fab.is_switch)[0])
    out = fab.out_arc[fab.out_ptr[s]:fab.out_ptr[s + 1]]
    up = out[fab.is_switch[fab.arc_dst[out]]]
    assert len(up) == 8  # the leaf's uplinks
    return topo, fab, up


@pytest.mark.parametrize("ulps", ULPS)
def test_uplinks_half_as_busy_as_the_bottleneck_count_whatever_the_rounding(leaf, ulps):
    topo, fab, up = leaf
    util = np.zeros(len(fab.arc_src))
    # the bottleneck uplink full; two at exactly half (as rounding leaves them), one a quarter,
    # four busier than half
    util[up] = [1.0, _nudge(0.5, ulps), _nudge(0.5, -ulps), 0.25, 0.75, 0.9, 1.0, 0.6]
    info = {"line_GBps": 50.0, "worst_rate_GBps": 5.0, "bottleneck_arc": int(up[0])}
    phase = SimpleNamespace(sol=SimpleNamespace(arc_utilization=util))
    text = bottlenecks._network_reason("pipeline send/receive", info, fab, topo, phase)
    assert text.startswith(f"ECMP hash collisions on {fab.nodes[fab.arc_src[up[0]]]} uplinks "
                           f"(3 of 8 idle or half used) limit pipeline send/receive to 10% ")


def test_uplinks_busier_than_half_are_no_collision(leaf):
    topo, fab, up = leaf
    util = np.zeros(len(fab.arc_src))
    util[up] = [1.0, 0.5 + 1e-6, 0.75, 0.9, 1.0, 0.6, 0.7, 0.8]
    info = {"line_GBps": 50.0, "worst_rate_GBps": 5.0, "bottleneck_arc": int(up[0])}
    phase = SimpleNamespace(sol=SimpleNamespace(arc_utilization=util))
    text = bottlenecks._network_reason("pipeline send/receive", info, fab, topo, phase)
    assert "ECMP hash collisions" not in text
