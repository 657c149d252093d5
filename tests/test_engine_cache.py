"""The engine's cache is an object its caller owns (issue 20): no process-wide state, nothing
keyed by id(), the same results with or without it."""

from __future__ import annotations

import gc
import weakref

import pytest

from designer.engine import network as net
from designer.engine import pipeline
from designer.engine.cache import EngineCache
from designer.topology.catalog import load_catalog
from designer.topology.templates import rail_optimized

CAT = load_catalog()
KW = dict(workload="gpt3-175b", tp=8, pp=1)


def test_runs_sharing_a_cache_share_the_fabric_and_its_routes():
    design = rail_optimized(servers=4, catalog=CAT)
    cache = EngineCache()
    first = pipeline.run(design, CAT, cache=cache, **KW)
    (fab,) = cache.fabrics()
    routes = dict(fab._routes)
    assert routes  # the run's phases were routed on the cached fabric
    again = pipeline.run(design, CAT, cache=cache, **KW)
    assert cache.fabrics() == [fab] and cache.fabric(design.topology) is fab
    assert all(fab._routes[k] is v for k, v in routes.items())  # routed once, reused
    assert again.to_json() == first.to_json()


def test_without_a_cache_nothing_is_kept_and_the_result_is_the_same():
    design = rail_optimized(servers=4, catalog=CAT)
    cached = pipeline.run(design, CAT, cache=EngineCache(), **KW)
    lone = pipeline.run(design, CAT, **KW)
    assert lone.to_json() == cached.to_json()
    assert net.fabric_of(design.topology) is not net.fabric_of(design.topology)  # a new one each time
    assert not [name for name in vars(net) if name.isupper() and isinstance(getattr(net, name), (dict, list))
                and name not in ("ROUTING",)]  # no module-level memo left in network.py


def test_two_caches_are_independent():
    design = rail_optimized(servers=2, catalog=CAT)
    a, b = EngineCache(), EngineCache()
    assert a.fabric(design.topology) is not b.fabric(design.topology)
    b.clear()
    assert b.fabrics() == [] and len(a.fabrics()) == 1


def test_an_edit_through_the_model_is_seen_and_an_undo_finds_the_kept_fabric():
    design = rail_optimized(servers=2, catalog=CAT)
    topo, cache = design.topology, EngineCache()
    before = cache.fabric(topo)
    lid = next(iter(topo.links))
    link = topo.remove_link(lid)
    after = cache.fabric(topo)
    assert after is not before and lid not in after.link_ids
    topo.add_link(link)  # back, but last in the link order: another structure
    assert cache.fabric(topo) is not before
    topo.restore_order({}, {lid: 0})  # where undo puts it: the structure lists equal the first ones
    assert cache.fabric(topo) is before
    with pytest.raises(AttributeError):  # and no change can go around the version
        topo.links[lid].b = topo.links[lid].a


def test_a_topology_that_is_gone_is_not_kept_alive_nor_mistaken_for_a_new_one():
    cache = EngineCache(fabrics=1, topologies=2)
    topo = rail_optimized(servers=2, catalog=CAT).topology
    fab = cache.fabric(topo)
    ref = weakref.ref(topo)
    del topo
    gc.collect()
    assert ref() is None  # the cache holds topologies weakly
    other = rail_optimized(servers=3, catalog=CAT).topology  # maybe at the same address
    assert cache.fabric(other) is not fab and cache.fabrics() != [fab]


@pytest.mark.parametrize("bad", [(0, 1), (1, 0)])
def test_a_cache_keeps_at_least_one_of_each(bad):
    with pytest.raises(ValueError, match="at least one"):
        EngineCache(*bad)
