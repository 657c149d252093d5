"""Traffic stage built with array operations (issue 15): the ring, pipeline and PXN rules of
``designer.engine.traffic`` (module docstring) checked flow by flow against a plain loop written
from those rules, on rail-plane fabrics where PXN moves senders, with odd group layouts (tp 3 on
8-GPU servers: groups straddle servers unevenly), several jobs and every nesting order; plus
small cases worked by hand."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import pytest

from designer.engine import traffic as tr
from designer.engine.placement import Placement, RailTable, ServerInfo, place, place_jobs, servers_of
from designer.topology.catalog import load_catalog
from designer.topology.templates import rail_optimized

CAT = load_catalog()


def _job(tp: int, pp: int, dp: int, cp: int = 1):
    """What ``placement.place`` reads of a workload (a real Workload refuses tp 3; the placement
    stage itself only warns about it)."""
    return SimpleNamespace(gpus=tp * pp * dp * cp, tp=tp, pp=pp, dp=dp, cp=cp)


# -- the rules as plain loops (module docstring of designer.engine.traffic) -----------------------

def _moved(pl: Placement, sender: int, a, b, pxn: bool = True):
    """PXN: a sender whose NIC shares no network with the receiver's sends through the first rail
    of its server that does; with none (or no endpoint on either side) the flow stays."""
    if not pxn or a is None or b is None or pl.networks(a) & pl.networks(b):
        return a
    return next((e for e in pl.servers[sender].rails if pl.networks(e) & pl.networks(b)), a)


def _ring_reference(pl: Placement, dim: str, pxn: bool = True) -> list[tuple]:
    out = []
    for gi, ranks in enumerate(pl.groups[dim].tolist()):
        by_server: dict[int, list[int]] = {}  # servers in order of their first rank
        for r in ranks:
            by_server.setdefault(int(pl.server[r]), []).append(r)
        lists = list(by_server.values())
        n = len(lists)
        if n < 2:
            continue
        width = min(map(len, lists))
        for j in range(width):
            for k in range(n):
                here, there = lists[k][j], lists[(k + 1) % n][j]
                a, b = pl.endpoint([here])[0], pl.endpoint([there])[0]
                if n == 2 and k == 1 and a == b:
                    continue
                out.append((_moved(pl, int(pl.server[here]), a, b, pxn), b, gi))
    return out


def _pipeline_reference(pl: Placement, pxn: bool = True) -> list[tuple]:
    out = []
    for gi, ranks in enumerate(pl.groups["pp"].tolist()):
        for x, y in zip(ranks, ranks[1:]):
            if pl.server[x] == pl.server[y]:
                continue
            a, b = pl.endpoint([x])[0], pl.endpoint([y])[0]
            out.append((_moved(pl, int(pl.server[x]), a, b, pxn), b, gi))
            out.append((_moved(pl, int(pl.server[y]), b, a, pxn), a, gi))
    return out


def _as_tuples(f: tr.FlowSet) -> list[tuple]:
    return list(zip(f.src, f.dst, f.group.tolist()))


@pytest.fixture(scope="module")
def planes():
    """64 DGX H100 in SUs of 4: 128 rail leaves are more than one 64-port spine reaches, so every
    rail gets its own switch plane and rails meet only inside the servers (PXN)."""
    servers = servers_of(rail_optimized(servers=64, su_size=4, storage="none", catalog=CAT), CAT)
    assert len({n for s in servers for n in s.networks.values()}) == 8
    return servers


def test_flows_follow_the_rules_on_rail_planes(planes):
    moved = 0
    for (tp, pp, cp), order, (jobs, how) in itertools.product(
            [(1, 1, 1), (3, 2, 1), (4, 8, 1), (2, 3, 2), (8, 4, 1), (6, 1, 1)],
            ["tp,pp,dp", "dp,tp,pp", "pp,dp,tp"], [(1, "packed"), (3, "scattered")]):
        per = len(planes) // jobs * 8
        pl = place_jobs(_job(tp, pp, per // (tp * pp * cp), cp), planes, order, jobs, how)
        for dim in ("dp", "tp", "pp"):
            f = tr.ring_flows(pl, dim)
            assert _as_tuples(f) == _ring_reference(pl, dim), (tp, pp, cp, order, jobs, dim)
            assert f.kind == [dim] * len(f.src)
            assert f.job.tolist() == pl.group_job(dim)[f.group].tolist()
        f = tr.pipeline_flows(pl)
        assert _as_tuples(f) == _pipeline_reference(pl), (tp, pp, cp, order, jobs)
        assert np.isinf(f.demand).all() and f.group.dtype == np.int64
        # after PXN every flow crosses one network: its two ends share one
        assert all(pl.networks(a) & pl.networks(b) for a, b in zip(f.src, f.dst))
        moved += sum(x != y for x, y in zip(_as_tuples(f), _pipeline_reference(pl, pxn=False)))
    assert moved > 100  # the sweep does exercise PXN


def test_pipeline_neighbours_on_other_rails_send_through_the_receivers_rail(planes):
    """tp 4, pp 4 on 2 servers (order tp,pp,dp): stage 0 on GPUs 0-3 and stage 1 on GPUs 4-7 of
    server 0, stages 2 and 3 likewise on server 1. Pipeline 0 (ranks 0, 4, 8, 12) crosses servers
    between rank 4 (server 0, GPU 4: rail 4's plane) and rank 8 (server 1, GPU 0: rail 0's):
    server 0 sends through its rail-0 NIC, server 1 answers through its rail-4 NIC."""
    pl = place(_job(4, 4, 1), planes)
    f = tr.pipeline_flows(pl)
    r0, r1 = planes[0].rails, planes[1].rails
    assert list(zip(f.src, f.dst))[:2] == [(r0[0], r1[0]), (r1[4], r0[4])]
    assert f.group.tolist() == [0, 0, 1, 1, 2, 2, 3, 3]  # one crossing per pipeline, both ways


def test_two_server_ring_runs_once_per_direction_on_every_rail(planes):
    """dp 16 over 2 servers: rail by rail, server 0 → server 1 and back (2 × 8 flows)."""
    pl = place(_job(1, 1, 16), planes)
    f = tr.ring_flows(pl, "dp")
    r0, r1 = planes[0].rails, planes[1].rails
    assert list(zip(f.src, f.dst)) == [p for j in range(8) for p in ((r0[j], r1[j]), (r1[j], r0[j]))]


def _bare(name: str, rails: tuple[str, ...], nets: dict[str, frozenset]) -> ServerInfo:
    return ServerInfo(name, 2, {}, 2, True, 5, rails, networks=nets)


def test_pxn_leaves_a_flow_whose_server_has_no_rail_on_the_receivers_network():
    """Server a's only rail is on network 1, b's on network 2: nothing to move to, the flow stays
    (the network stage then names it as unreachable). Server c has rails on 1 and 2: its flow
    to b leaves through its rail on network 2."""
    servers = [_bare("a", ("a0",), {"a0": frozenset({1})}),
               _bare("b", ("b0",), {"b0": frozenset({2})}),
               _bare("c", ("c0", "c1"), {"c0": frozenset({1}), "c1": frozenset({2})})]
    server = np.array([0, 0, 1, 1, 2, 2])
    local = np.array([0, 1, 0, 1, 0, 1])
    pl = Placement(("tp", "pp", "dp"), server, local, servers, {})
    t = pl.rail_table()
    assert t.names.tolist() == ["a0", "b0", "c0", "c1", None]
    assert t.rank.tolist() == [0, 0, 1, 1, 2, 3]  # GPU i of a server with k rails: rail i*k/2
    out = tr._pxn(t, np.array([0, 2, 2]), np.array([0, 2, 3]), np.array([1, 1, 0]))
    assert t.names[out].tolist() == ["a0", "c1", "c0"]


def test_servers_without_a_network_link_have_no_endpoint_and_no_ring():
    """Two servers with no rails: their ranks' endpoint is None on both sides, which the
    two-server rule counts once; PXN leaves it (the network stage refuses it with a message)."""
    servers = [_bare("a", (), {}), _bare("b", (), {})]
    pl = Placement(("tp", "pp", "dp"), np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1]), servers,
                   {"dp": np.array([[0, 2], [1, 3]])})
    f = tr.ring_flows(pl, "dp")
    assert f.src == [None, None] and f.dst == [None, None] and f.group.tolist() == [0, 1]


def test_unknown_models_name_the_first_component_in_design_order():
    """check_models (run by servers_of) refuses a design whose component model, or server GPU
    model, is not in the catalog, naming the first such component in the design's order (here
    srv-1, nic-1 … nic-8, srv-2, …): the same with the components grouped by kind beforehand."""
    from designer.engine.placement import check_models, components_by_kind
    from designer.errors import UsageError
    from designer.topology.templates import leaf_spine

    topo = leaf_spine(servers=4, catalog=CAT).topology
    nics = [c for c in topo.components.values() if c.kind == "nic"]
    srv2 = topo.components["srv-2"]
    assert list(topo.components).index(nics[0].id) < list(topo.components).index("srv-2") \
        < list(topo.components).index(nics[-1].id)

    def refused(match):
        for kinds in (None, components_by_kind(topo)):
            with pytest.raises(UsageError, match=match):
                check_models(topo, CAT, kinds)

    topo.set_prop(srv2.id, "gpu_model", "no-such-gpu")
    topo.update_component(nics[-1].id, model="no-such-nic")
    refused("GPU server 'srv-2': no gpu 'no-such-gpu'")  # srv-2 comes before the last NIC
    topo.update_component(nics[0].id, model="no-such-nic")
    refused(f"'{nics[0].id}': no nic 'no-such-nic'")  # the first NIC comes before srv-2
    topo.set_prop(srv2.id, "gpu_model", None)
    for nic in (nics[0], nics[-1]):
        topo.update_component(nic.id, model="connectx-7")
    check_models(topo, CAT, components_by_kind(topo))  # all known: no error


def test_servers_are_alike_only_with_the_same_adapters_and_overrides():
    """The resources stage groups servers whose model, overrides, adapters (kind, model and
    overrides, in slot order) and scenario are equal; any one difference makes another group."""
    from designer.engine.resources_adapter import _server_key
    from designer.topology.model import Component

    def server(props=None):
        return Component(id="s", kind="gpu_server", model="dgx-h100", props=props or {})

    def nic(model="connectx-7", props=None, kind="nic"):
        return Component(id="n", kind=kind, model=model, props=props or {})

    base = _server_key(server(), [nic(), nic()], "host")
    assert _server_key(server(), [nic(), nic()], "host") == base
    different = [_server_key(server(), [nic(), nic()], "dpu"),
                 _server_key(server({"gpu_model": "h200"}), [nic(), nic()], "host"),
                 _server_key(server(), [nic()], "host"),
                 _server_key(server(), [nic(), nic("connectx-8")], "host"),
                 _server_key(server(), [nic(), nic(kind="dpu")], "host"),
                 _server_key(server(), [nic(), nic(props={"max_bandwidth_Gbps": 200})], "host"),
                 _server_key(server(), [nic(props={"max_bandwidth_Gbps": 200}), nic()], "host")]
    assert base not in different and len(set(different)) == len(different)
    assert _server_key(server(), [nic(props={"a": 1, "b": 2})], "host") == \
        _server_key(server(), [nic(props={"b": 2, "a": 1})], "host")  # overrides compared as sets
