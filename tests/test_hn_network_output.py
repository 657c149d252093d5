"""Issue 15 (whole 131k-GPU run): the network stage's inputs and outputs made without per-item
Python work must read and answer as before: flow ends held as rows of name tables
(``traffic.Endpoints``), the fabric cache (never stale after an edit), link capacities and
congestion factors, and the ``run --json`` links text."""

from __future__ import annotations

import numpy as np
import pytest

from designer.engine import network as net
from designer.engine import traffic as tr
from designer.engine.placement import place, servers_of
from designer.topology.catalog import load_catalog
from designer.topology.templates import rail_optimized

CAT = load_catalog()


# -- flow ends as rows of name tables ---------------------------------------------------------

def test_endpoints_read_as_the_list_of_ids_they_stand_for():
    table = np.array(["a", "b", "c", None], dtype=object)
    e = tr.Endpoints(table, np.array([2, 0, 0, 3, 1]))
    ids = ["c", "a", "a", None, "b"]
    assert len(e) == 5 and bool(e) and not tr.Endpoints(table, np.zeros(0, dtype=np.int64))
    assert list(e) == ids and e == ids and ids == e and e != ids[:-1] and e != ids[:-1] + ["x"]
    assert [e[i] for i in range(-5, 5)] == ids + ids and e[1:4] == ids[1:4]
    with pytest.raises(IndexError):
        e[5]
    with pytest.raises(IndexError):
        e[-6]
    # + with a list (either side) or another Endpoints keeps the order
    both = e + ["x", "y"]
    assert isinstance(both, tr.Endpoints) and both == ids + ["x", "y"] and both[6] == "y"
    assert ["x"] + e == ["x"] + ids and e + e == ids + ids
    assert list(zip(e, e)) == list(zip(ids, ids))


def test_node_indices_of_endpoints_are_those_of_their_ids():
    """The fabric looks up each table once; the answer is the per-id one, with ids that are not
    nodes (None, an unknown name, an equal string made elsewhere) as a dict look-up gives."""
    topo = rail_optimized(servers=4).topology
    fab = net.fabric_of(topo)
    copy = "".join(list(fab.nodes[3]))
    table = np.array([fab.nodes[5], None, "no-such-node", copy, fab.nodes[0]], dtype=object)
    rows = np.array([0, 4, 1, 2, 3, 3, 0])
    e = tr.Endpoints(table, rows) + [fab.nodes[7], "nope"]
    want = [fab.index.get(x, -1) for x in list(e)]
    assert want == [5, 0, -1, -1, 3, 3, 5, 7, -1]
    assert fab.node_indices(e).tolist() == want == fab.node_indices(list(e)).tolist()
    assert fab.node_indices(e).tolist() == want  # the remembered table answers the same


def test_phase_flows_name_the_same_ends_as_the_rail_table():
    """ring, pipeline and all-to-all flows hold rows of their tables: the ids they give are the
    table's names at those rows, and extending with storage flows keeps both parts."""
    design = rail_optimized(servers=8)
    servers = servers_of(design, CAT)
    from types import SimpleNamespace
    pl = place(SimpleNamespace(gpus=64, tp=2, pp=2, dp=16, cp=1), servers)
    t = pl.rail_table()
    f = tr.ring_flows(pl, "dp")
    assert isinstance(f.src, tr.Endpoints) and len(f.src) == len(f.demand) > 0
    (table, rows), = f.src.segments()
    assert table is t.names and list(f.src) == t.names[rows].tolist()
    stor = tr.FlowSet(["st-a", "st-b"], [t.names[0], t.names[1]], np.ones(2), np.full(2, -1),
                      ["storage"] * 2, np.zeros(2, dtype=np.int64))
    both = f.extend(stor)
    assert list(both.src) == list(f.src) + ["st-a", "st-b"]
    assert list(both.dst) == list(f.dst) + [t.names[0], t.names[1]]
    fab = net.fabric_of(design.topology)
    assert fab.node_indices(both.dst).tolist() == [fab.index.get(x, -1) for x in both.dst]


# -- the run --json links text -------------------------------------------------------------------

def _link_results(ids, seed):
    import json  # noqa: F401
    import math
    rng = np.random.default_rng(seed)
    util = rng.choice([0.0, -0.0, 0.5, 1.0, 1 / 3, math.nan, 1e-320], len(ids))
    codes = rng.integers(0, 3, len(ids))
    names = ["", "dp", "p\u00e9"]
    return util, names, codes


@pytest.mark.parametrize("odd", [None, 'q"', "b\\s", "t\tab", "\u00e9", "del\x7f", "~ok~"])
@pytest.mark.parametrize("indent,level", [(1, 0), (1, 1), (2, 3), (0, 1)])
def test_links_text_is_json_dumps_with_plain_ids_or_one_odd_one(odd, indent, level):
    """Plain ids (printable ASCII, no quote or backslash) go into the text as they are; one id
    json escapes anywhere among them sends all through the encoder: the text is json.dumps' in
    both cases, from a list of phases or from phase codes."""
    import json
    from designer.engine.result import LinkResults
    ids = [f"link-{i}" for i in range(50)]
    if odd is not None:
        ids[17] = odd + "17"
    util, names, codes = _link_results(ids, len(ids) + indent)
    phase = [names[c] for c in codes]
    want = json.dumps([{"id": i, "utilization": None if u != u else float(u), "phase": p}
                       for i, u, p in zip(ids, util, phase)], indent=indent)
    want = want.replace("\n", "\n" + " " * (indent * level))  # as it stands level deep
    listed = LinkResults(ids, util, phase)
    coded = LinkResults.from_codes(ids, util, names, codes)
    assert listed.json_text(indent, level) == want == coded.json_text(indent, level)
    assert coded.phase == phase and coded.to_json() == listed.to_json()  # (NaN is not equal to itself)
    one = LinkResults.from_codes(ids[:1], util[:1], names, codes[:1])
    assert one.json_text(indent, level) == LinkResults(ids[:1], util[:1], phase[:1]).json_text(indent, level)


def test_coded_phases_are_checked():
    from designer.engine.result import LinkResults
    with pytest.raises(ValueError):
        LinkResults.from_codes(["a", "b"], np.zeros(2), ["x"], np.array([0, 1]))
    with pytest.raises(ValueError):
        LinkResults.from_codes(["a", "b"], np.zeros(2), ["x"], np.array([0]))
