"""Checkpoint writes go at the storage path's capacity, not at the rate the sample reads ask for
(pipeline._storage_rates: the write limit is the storage flows solved with elastic demand).

Before the fix a vision workload reading 100-byte samples wrote a 0.4 GB checkpoint in 18 s on a
16-server leaf-spine whose storage takes 65 GB/s of writes: the tiny read rate was taken as the
fabric's write limit."""

import pytest

from designer.engine.pipeline import run
from designer.topology import templates
from designer.topology.catalog import load_catalog

#: ResNet-50 has 25.6 M parameters (He et al. 2015, torchvision resnet50 model card); the preset
#: gives none (MLPerf Storage emulates the accelerator), so the test sets it to have a checkpoint
RESNET50_PARAMS = 25.6e6
SCEN = {"checkpoint_interval_s": 3600}


@pytest.fixture(scope="module")
def cat():
    return load_catalog()


def _storage(design, cat, bytes_per_sample):
    r = run(design, cat, workload={"preset": "resnet50-imagenet", "bytes_per_sample": bytes_per_sample,
                                   "params": RESNET50_PARAMS}, scenario=SCEN)
    return r.to_json()["storage"]


def test_write_follows_storage_system_not_read_demand(cat):
    design = templates.TEMPLATES["leaf-spine"](servers=16)
    (stor,) = design.topology.storage()
    write_GBps = float(cat.resolve(stor)["write_GBps"])  # catalog entry (its `source`)
    small = _storage(design, cat, 100)
    big = _storage(design, cat, 114660)  # MLPerf Storage v1.0 resnet50 record_length
    assert small["read_demand_GBps"] < 0.01 * big["read_demand_GBps"]
    # every server writes its share at the same time, so the whole checkpoint goes at the storage
    # system's write rate (its links carry 8 x 200 Gb/s = 200 GB/s, more than it writes)
    for s in (small, big):
        assert s["checkpoint_GB"] > 0
        assert s["checkpoint_write_s"] == pytest.approx(s["checkpoint_GB"] / write_GBps, rel=1e-9)


def test_write_follows_the_storage_link(cat):
    """A storage system behind one link of 8 lanes x 8 Gb/s (8 GB/s, below its 65 GB/s write
    rate): the checkpoint goes at the link's rate, whatever the reads ask."""
    design = templates.TEMPLATES["leaf-spine"](servers=16)
    (stor,) = design.topology.storage()
    links = [l for l in design.topology.links.values() if stor.id in (l.a, l.b)]
    assert len(links) == 1 and links[0].lanes == 8 and links[0].medium == "infiniband"
    design.topology.update_link(links[0].id, speed_Gbps=8.0)
    for bps in (100, 114660):
        s = _storage(design, cat, bps)
        assert s["checkpoint_write_s"] == pytest.approx(s["checkpoint_GB"] / 8.0, rel=1e-9)
