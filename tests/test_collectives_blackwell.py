"""NVLink 5 collectives against published nccl-tests figures (tests/data/nccl_blackwell.json):
one 8x B200 server, a whole GB200 NVL72 rack, two B200 servers; the all-to-all of
``dpu-designer collective``. Issue #22: the engine was +18% (8x B200) and +46% (NVL72) over the
measured all-reduce busbw and its algbw grew with the rank count where the measurements fall.

``collectives.NVLS_BUSBW_CAP_GBPS[5]`` is the 8x B200 figure; the NVL72 and two-server figures
are checks, not fits."""

import json
from pathlib import Path

import pytest

from designer.cli import main
from designer.engine import collectives as coll

REF = json.loads((Path(__file__).parent / "data" / "nccl_blackwell.json").read_text())
BIG = 8 * 2 ** 30
BAND = 0.10  #: the issue's acceptance band


def domain(n: int, nvlink: float = 900.0) -> coll.GroupShape:
    """``n`` GPUs of one NVLink 5 NVSwitch domain (an HGX B200 for 8, an NVL72 rack for 72)."""
    return coll.GroupShape(ranks=n, nodes=1, nvlink_GBps=nvlink, nvswitch=True, nvls=True)


def test_the_nvls_ceiling_is_the_8_gpu_measurement():
    assert coll.NVLS_BUSBW_CAP_GBPS[5] == REF["b200_8gpu_allreduce"]["busbw_GBps"]


def test_8x_b200_calibration_point_is_reproduced():
    """Not a check: the 8x B200 busbw (NVIDIA/nccl#1807) is the figure NVLS_BUSBW_CAP_GBPS[5] is
    taken from, so this only shows the cap reaches its own calibration point through NVLS; the
    check of the ceiling is the NVL72 test below (72 GPUs, a measurement the cap was not set on)."""
    got = coll.best("allreduce", BIG, domain(8))
    assert got.algorithm == "nvls"
    assert got.busbw_GBps == pytest.approx(REF["b200_8gpu_allreduce"]["busbw_GBps"], rel=BAND)


@pytest.mark.parametrize("size_key,bw_key,nbytes", [("busbw_GBps", "algbw_GBps", BIG),
                                                   ("busbw_4GB_GBps", "algbw_4GB_GBps", BIG // 2)])
def test_nvl72_all_reduce_within_10_percent(size_key, bw_key, nbytes):
    ref = REF["gb200_nvl72_allreduce"]
    got = coll.best("allreduce", nbytes, domain(72))
    assert got.busbw_GBps == pytest.approx(ref[size_key], rel=BAND), got
    assert got.algbw_GBps == pytest.approx(ref[bw_key], rel=BAND), got


def test_nvlink5_algbw_falls_with_the_rank_count_as_measured():
    """Measured: 474 GB/s algbw on 8 GPUs (830 busbw), 423 on 72; the engine's must fall too."""
    alg = [coll.best("allreduce", BIG, domain(n)).algbw_GBps for n in (4, 8, 16, 36, 72)]
    assert alg == sorted(alg, reverse=True)
    measured_8 = REF["b200_8gpu_allreduce"]["busbw_GBps"] * 8 / 14
    assert alg[1] / alg[-1] == pytest.approx(measured_8 / REF["gb200_nvl72_allreduce"]["algbw_GBps"], rel=0.05)


def test_nvlink4_is_unchanged_by_the_nvlink5_ceiling():
    """The ceiling is NVLink 5's; an 8x H100 keeps its n/(n+1) stage model (480 GB/s measured)."""
    h100 = domain(8, nvlink=450.0)
    assert h100.generation == 0 and h100.nvls_cap_algbw(8) == float("inf")
    want = 450 * coll.NVLINK_EFFICIENCY * coll.NVLS_EFFICIENCY * 8 / 9
    assert coll.cost("allreduce", BIG, h100, "nvls").algbw_GBps == pytest.approx(want, rel=0.01)
    assert domain(8).generation == 5
    assert coll.GroupShape(ranks=8, nvlink_GBps=450, nvlink_gen=5).generation == 5


def test_two_b200_servers_all_reduce_within_10_percent():
    """Two 8x B200 servers, eight 400G NICs each: NVLSTree at the NICs' rate (the NVLink stage,
    capped, is above it), measured 690 GB/s busbw."""
    ref = REF["b200_2node_allreduce"]
    line = ref["nic_line_Gbps"] / 8
    g = coll.GroupShape(ranks=16, nodes=2, nvlink_GBps=900, nvswitch=True, nvls=True,
                        net_GBps=line * coll.NET_EFFICIENCY, net_line_GBps=line, nics_per_node=8)
    got = coll.best("allreduce", ref["bytes"], g)
    assert got.busbw_GBps == pytest.approx(ref["busbw_GBps"], rel=BAND)
    assert coll._nvls_stage_GBps(g) > 8 * g.net_GBps  # the network, not NVLink, sets the rate


def test_alltoall_is_pairwise_and_its_busbw_is_nccl_tests():
    """nccl-tests alltoall_perf: busbw = algbw·(n−1)/n; inside one domain every byte for another
    rank crosses NVLink once, so algbw = NVLink rate × efficiency × n/(n−1) (derived)."""
    g = domain(8)
    c = coll.best("alltoall", BIG, g)
    assert c.algorithm == "pairwise"
    assert c.busbw_GBps == pytest.approx(c.algbw_GBps * 7 / 8)
    assert c.busbw_GBps == pytest.approx(g.intra_GBps, rel=0.01)
    for algorithm in ("ring", "tree", "nvls", "sharp", "nvls_tree", "hierarchical"):
        assert coll.cost("alltoall", BIG, g, algorithm) is None
    assert coll.cost("allreduce", BIG, g, "pairwise") is None


@pytest.mark.parametrize("op,engine_op", [("all_to_all", "alltoall"), ("alltoall", "alltoall"),
                                          ("all_gather", "allgather"), ("reduce_scatter", "reduce_scatter"),
                                          ("all_reduce", "allreduce")])
def test_collective_command_takes_nccl_tests_names(op, engine_op, capsys):
    assert main(["collective", "resources/examples/example.json", "--op", op, "--gpus", "16",
                 "--min", "1M", "--max", "4M"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"# {engine_op} on 16 GPUs")
    assert len([ln for ln in out.splitlines() if not ln.startswith("#")]) == 3


def test_collective_command_refuses_an_unknown_op_in_one_line(capsys):
    assert main(["collective", "resources/examples/example.json", "--op", "allscatter"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "all_to_all" in err
