"""Multi-node NVLink SHARP (NVLS with IB SHARP, NVLSTree) against published nccl-tests figures
for 8x H100 servers with eight 400 Gb/s NICs each (tests/data/nccl_reference.json, with sources)."""

import json
from pathlib import Path

import pytest

from designer.engine import collectives as coll

REF = json.loads((Path(__file__).parent / "data" / "nccl_reference.json").read_text())
H = REF["h100_8x400g_multinode"]
BIG = 8 * 2 ** 30  # nccl-tests peak sizes (4-8 GB in the sources)


def h100_nodes(nodes, sharp=False, nvls=True, nics=H["nics_per_node"], depth=1):
    """``nodes`` 8x H100 servers, one 400G NIC per GPU achieving the engine's NIC efficiency."""
    line = H["nic_line_Gbps"] / 8
    return coll.GroupShape(ranks=H["gpus_per_node"] * nodes, nodes=nodes,
                           nvlink_GBps=H["nvlink_GBps_per_direction"], nvswitch=True, nvls=nvls,
                           net_GBps=line * coll.NET_EFFICIENCY, net_line_GBps=line,
                           nics_per_node=nics, sharp=sharp, tree_depth=depth, switch_latency_us=0.13)


def busbw(algorithm, g, nbytes=BIG):
    return coll.cost("allreduce", nbytes, g, algorithm).busbw_GBps


def test_ring_at_two_nodes_is_the_nic_bound_figure():
    assert busbw("ring", h100_nodes(2)) == pytest.approx(H["ring_busbw_GBps"], rel=0.05)


def test_nvls_tree_at_two_nodes():
    assert busbw("nvls_tree", h100_nodes(2)) == pytest.approx(H["nvls_tree_2node_busbw_GBps"], rel=0.05)


def test_nvls_tree_at_scale_falls_to_the_tree_rate():
    low, high = H["nvls_tree_scale_busbw_GBps"]
    got = busbw("nvls_tree", h100_nodes(32))
    assert low * 0.98 <= got <= high * 1.02


def test_nvls_with_sharp_beats_ring_and_nvls_tree_beyond_two_nodes_within_the_nvlink_bound():
    assert busbw("sharp", h100_nodes(2, sharp=True)) > busbw("ring", h100_nodes(2)) * 1.1
    for nodes in (4, 16, 64):
        g = h100_nodes(nodes, sharp=True)
        n = g.ranks
        nvls_sharp = busbw("sharp", g)
        assert nvls_sharp > busbw("nvls_tree", g) * 1.1
        assert nvls_sharp > busbw("ring", g) * 1.1
        # the NVLink SHARP stage moves what a one-server NVLS moves: its measured algbw bounds it
        assert nvls_sharp <= H["nvls_intra_algbw_GBps"] * 2 * (n - 1) / n * 1.02
        assert coll.best("allreduce", BIG, g).algorithm == "sharp"


def test_without_switch_reduction_large_all_reduces_pick_nvls_tree_and_small_ones_a_tree():
    g = h100_nodes(16)
    assert coll.best("allreduce", BIG, g).algorithm in ("nvls_tree", "ring")
    assert coll.best("allreduce", 64 * 2 ** 20, g).algorithm == "nvls_tree"
    # latency: 2·log2(nodes) network hops instead of a ring's 2·(nodes − 1)
    assert coll.cost("allreduce", 8, g, "nvls_tree").time_s < coll.cost("allreduce", 8, g, "ring").time_s


def test_nvls_tree_latency_grows_with_log_of_nodes():
    t = {n: coll.cost("allreduce", 8, h100_nodes(n), "nvls_tree").time_s for n in (2, 4, 16)}
    # tuning.cc: 23 us + 2·log2(nodes)·14 us
    assert t[4] - t[2] == pytest.approx(2 * 14e-6)
    assert t[16] - t[4] == pytest.approx(2 * 2 * 14e-6)


def test_nvls_across_servers_needs_nvlink_sharp_and_two_gpus_per_server():
    assert coll.cost("allreduce", BIG, h100_nodes(4, nvls=False), "nvls_tree") is None
    one_per_server = coll.GroupShape(ranks=4, nodes=4, nvlink_GBps=450, nvswitch=True, nvls=True,
                                     net_GBps=46.875, net_line_GBps=50, sharp=True)
    assert coll.cost("allreduce", BIG, one_per_server, "nvls_tree") is None
    # one rank per server: SHARP reduces the whole buffer on the one NIC (CollNet, no NVLS stage)
    assert coll.cost("allreduce", BIG, one_per_server, "sharp").algbw_GBps == pytest.approx(46.875, rel=0.02)
    for op in ("reduce_scatter", "allgather", "sendrecv"):
        assert coll.cost(op, BIG, h100_nodes(4, sharp=True), "nvls_tree") is None


def test_nvls_stages_are_bounded_by_the_slower_of_nvlink_and_the_nics():
    # two NICs per server: the network stage (2 x 46.9 GB/s) is far below the NVLink stage
    g = h100_nodes(4, sharp=True, nics=2)
    assert coll.cost("allreduce", BIG, g, "sharp").algbw_GBps == pytest.approx(2 * 50 * coll.NET_EFFICIENCY, rel=0.01)
    assert coll.cost("allreduce", BIG, g, "nvls_tree").algbw_GBps == pytest.approx(50 * coll.NET_EFFICIENCY, rel=0.01)


def test_no_algorithm_beats_the_lower_bound():
    for nodes in (2, 4, 32):
        for sharp in (False, True):
            g = h100_nodes(nodes, sharp=sharp)
            for size in (1e3, 1e6, 1e9):
                assert coll.best("allreduce", size, g).time_s >= coll.allreduce_lower_bound_s(size, g)


def test_the_engine_picks_nvls_tree_for_a_two_server_gradient_all_reduce_without_switch_reduction():
    """Two DGX H100 on a rail-optimized Ethernet fabric without SHARP (Spectrum-4 SN5600), eight
    400G NICs each: the DP all-reduce of a 16-rank job runs NVLSTree at the 2-node figure."""
    from designer.engine.pipeline import run
    from designer.topology.catalog import load_catalog
    from designer.topology.templates import rail_optimized

    cat = load_catalog()
    assert not cat.get("switch", "sn5600").get("sharp")
    design = rail_optimized(servers=2, catalog=cat, storage="none", switch="sn5600")
    design.workload = {"preset": "llama3-8b", "gpus": 0, "global_batch": 32, "optimizer_sharded": False}
    (dp,) = [c for c in run(design, cat, tp=1).collectives if c.name == "dp_allreduce"]
    assert (dp.algorithm, dp.ranks, dp.servers) == ("nvls_tree", 16, 2)
    assert dp.busbw_GBps == pytest.approx(H["nvls_tree_2node_busbw_GBps"], rel=0.05)


NVLS_BY_GPUS = REF["h100_nvls_by_gpus"]


@pytest.mark.parametrize("gpus", [2, 3, 4, 5, 6, 7, 8])
def test_one_server_all_reduce_by_gpu_count(gpus):
    """NVLink SHARP pays off from 5 GPUs of an 8x H100 server; below that the best all-reduce
    runs at the ring's rate (NVIDIA/nccl#1455)."""
    g = coll.GroupShape(ranks=gpus, nodes=1, nvlink_GBps=NVLS_BY_GPUS["nvlink_GBps_per_direction"],
                        nvswitch=True, nvls=True)
    got = coll.best("allreduce", BIG, g).busbw_GBps
    low, high = NVLS_BY_GPUS["ring_busbw_GBps"]
    want = NVLS_BY_GPUS["nvls_busbw_GBps"].get(str(gpus))
    if want is None:
        assert low * 0.97 <= got <= high * 1.03
    else:
        assert got == pytest.approx(want, rel=0.05)


def test_alltoall_with_a_lone_rank_on_a_server_is_set_by_its_rail():
    # 8 + 1 GPUs: the lone rank sends 8/9 of its data over its one rail, the slowest rank
    line = H["nic_line_Gbps"] / 8
    g = coll.GroupShape(ranks=9, nodes=2, nvlink_GBps=450, nvswitch=True,
                        net_GBps=line * coll.NET_EFFICIENCY, net_line_GBps=line, min_local=1)
    nbytes = 64 * 2 ** 20
    floor = nbytes * 8 / 9 / (g.net_GBps * 1e9)
    t = coll.cost("alltoall", nbytes, g, "pairwise").time_s
    assert floor <= t < floor + 20e-6  # plus one network latency
    even = coll.cost("alltoall", nbytes, coll.GroupShape(**{**g.__dict__, "ranks": 16, "min_local": 0}),
                     "pairwise").time_s
    uneven = coll.cost("alltoall", nbytes, coll.GroupShape(**{**g.__dict__, "ranks": 12, "min_local": 4}),
                       "pairwise").time_s
    assert uneven > even * 1.2  # 8 + 4: a rank of the 4 sends 8/12 remote, not 8/16


def test_dispatch_without_a_network_is_refused_as_pairwise_is():
    from designer.errors import UsageError

    g = coll.GroupShape(ranks=16, nodes=2, nvlink_GBps=450, net_GBps=0.0)
    assert coll.cost("alltoall", 1e6, g, "pairwise") is None
    with pytest.raises(UsageError, match="no algorithm can run alltoall"):
        coll.best("alltoall", 1e6, g)
    with pytest.raises(UsageError, match="no algorithm can run alltoall"):
        coll.dispatch_s(1e6, 5e5, g)
