"""Issue #22: ``dpu-designer run`` charges an expert-parallel group spread unevenly over servers
(8 + 1 GPUs) the lone rank's all-to-all, as ``dpu-designer collective --op alltoall`` does: the
run's group shape carries ``min_local`` from its slowest group (one path, ``_group_shape``)."""

import pytest

from designer.cli import main
from designer.engine import collectives as coll
from designer.engine.pipeline import group_shape_for, run
from designer.commands.run import load_design
from designer.topology.catalog import load_catalog

EXAMPLE = "resources/examples/example.json"
MIB64 = 64 * 2 ** 20


def _ep(gpus: int):
    # an MoE of 4 layers, one expert group of all the GPUs (ep = dp = gpus), 64 MiB per all-to-all
    r = run(load_design(EXAMPLE), load_catalog(), workload={"preset": "mixtral-8x7b", "experts": 144,
            "layers": 4, "interleave": 1}, tp=1, pp=1, dp=gpus, ep=gpus, global_batch=2 * gpus)
    c = next(c for c in r.collectives if c.name == "ep_alltoall")
    assert c.ranks == gpus and c.bytes == MIB64
    return c


def _cli(gpus: int, capsys) -> float:
    assert main(["collective", EXAMPLE, "--op", "alltoall", "--gpus", str(gpus), "--min", "64M",
                 "--max", "64M"]) == 0
    return float(capsys.readouterr().out.splitlines()[-1].split()[1]) * 1e-6


def test_an_ep_group_of_8_plus_1_gpus_is_slower_per_byte_than_8_plus_8(capsys):
    nine, sixteen = _ep(9), _ep(16)
    # per byte a rank sends to others: 8/9 of its data on 9 ranks, 15/16 on 16
    per_byte9 = nine.time_s / (MIB64 * 8 / 9)
    per_byte16 = sixteen.time_s / (MIB64 * 15 / 16)
    assert per_byte9 > 1.5 * per_byte16  # the lone rank's one rail carries 8/9 of its data
    # at least the lone rank's 8/9 x 64 MiB over one 400 Gb/s rail at the NCCL efficiency
    assert nine.time_s >= MIB64 * 8 / 9 / (400 / 8 * coll.NET_EFFICIENCY * 1e9)
    # the same figures as `collective --op alltoall` (its shape comes from the same _group_shape)
    assert nine.time_s == pytest.approx(_cli(9, capsys), rel=0.05)
    assert sixteen.time_s == pytest.approx(_cli(16, capsys), rel=0.05)


def test_group_shape_for_carries_the_fewest_ranks_on_one_server():
    design, catalog = load_design(EXAMPLE), load_catalog()
    assert group_shape_for(design, catalog, 9).min_local == 1
    assert group_shape_for(design, catalog, 12).min_local == 4
    assert group_shape_for(design, catalog, 16).min_local == 8
    assert group_shape_for(design, catalog, 8).min_local == 8  # one server: all its ranks
