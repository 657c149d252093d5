"""Routing and max-min sharing on drawn fabrics; end-to-end engine behaviour."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from designer.engine import network as net
from designer.engine.pipeline import group_shape_for, run
from designer.topology.catalog import load_catalog
from engine_fixtures import cluster

CAT = load_catalog()
TABLE1 = json.loads((Path(__file__).parent / "data" / "megatron_table1.json").read_text())


def _solve(design, src, dst, routing="ecmp", seed=0):
    fab = net.fabric_of(design.topology)
    s = np.array([fab.index[x] for x in src])
    d = np.array([fab.index[x] for x in dst])
    routes = net.route(fab, s, d, routing, seed)
    cap = net.arc_capacity_GBps(fab, design.topology)
    return fab, routes, net.max_min(routes, cap, np.full(len(src), np.inf))


def test_two_flows_share_one_link_fairly():
    d = cluster(2, rails=1, servers_per_leaf=2, spines=1)
    _, _, sol = _solve(d, ["nic-0-0", "nic-1-0"], ["nic-1-0", "nic-0-0"])
    assert sol.rate_GBps == pytest.approx([50.0, 50.0])
    _, _, sol = _solve(d, ["nic-0-0", "nic-0-0"], ["nic-1-0", "nic-1-0"])
    assert sol.rate_GBps == pytest.approx([25.0, 25.0])


def test_oversubscription_limits_cross_leaf_flows():
    full = cluster(8, rails=1, servers_per_leaf=4, spines=4)
    thin = cluster(8, rails=1, servers_per_leaf=4, spines=1, uplinks_per_leaf=1)
    src = [f"nic-{i}-0" for i in range(4)]
    dst = [f"nic-{i + 4}-0" for i in range(4)]
    _, _, a = _solve(full, src, dst, "adaptive")
    _, _, b = _solve(thin, src, dst, "adaptive")
    assert a.rate_GBps == pytest.approx([50.0] * 4)
    assert b.rate_GBps == pytest.approx([12.5] * 4)  # 4 flows on one 50 GB/s uplink: 4:1


def test_ecmp_collisions_versus_adaptive_spreading():
    d = cluster(16, rails=1, servers_per_leaf=8, spines=8)
    src = [f"nic-{i}-0" for i in range(8)]
    dst = [f"nic-{i + 8}-0" for i in range(8)]
    worst = []
    for seed in range(5):
        _, _, sol = _solve(d, src, dst, "ecmp", seed)
        worst.append(sol.rate_GBps.min())
    _, _, ad = _solve(d, src, dst, "adaptive")
    assert ad.rate_GBps == pytest.approx([50.0] * 8)
    assert min(worst) < 50.0  # 8 flows hashed onto 8 uplinks collide for some seed


def test_rail_alignment_keeps_dp_traffic_off_the_spine():
    rail = cluster(8, rails=8, servers_per_leaf=8, rail_optimized=True, spines=1, uplinks_per_leaf=1)
    tor = cluster(8, rails=8, servers_per_leaf=1, rail_optimized=False, spines=1, uplinks_per_leaf=1)
    shape_rail = group_shape_for(rail, CAT)
    shape_tor = group_shape_for(tor, CAT)
    assert shape_rail.net_GBps > 4 * shape_tor.net_GBps


def test_unconnected_server_is_a_usage_error():
    from designer.errors import UsageError

    d = cluster(4, rails=1, servers_per_leaf=2, spines=1)
    d.topology.remove_link("l-nic-3-0")
    with pytest.raises(UsageError, match="no network link"):
        run(d, CAT, workload="megatron-gpt-1.7b", dp=4, tp=8)


@pytest.mark.parametrize("seed", range(40))
def test_invariants_on_generated_designs(seed):
    rng = np.random.default_rng(seed)
    servers = int(rng.integers(2, 17))
    d = cluster(servers, rails=int(rng.choice([1, 2, 8])), servers_per_leaf=int(rng.integers(1, 5)),
                rail_optimized=bool(rng.integers(0, 2)), spines=int(rng.integers(1, 5)),
                uplinks_per_leaf=int(rng.integers(1, 9)), storage=int(rng.integers(0, 2)))
    gpus = servers * 8
    tp = int(rng.choice([1, 2, 8]))
    dp = gpus // tp
    r = run(d, CAT, workload="megatron-gpt-1.7b", tp=tp, pp=1, dp=dp, global_batch=dp * 4, micro_batch=1,
            scenario={"routing": str(rng.choice(["ecmp", "adaptive"])), "checkpoint_interval_s": 0},
            seed=seed)
    assert all(l.utilization <= 1.0 + 1e-6 for l in r.links)
    peak = r.tflops_per_gpu * 100 / r.percent_of_peak
    floor_days = 6 * r.parameters * r.workload["tokens"] / (r.gpus * peak * 1e12) / 86400
    assert r.training_time_days >= floor_days
    assert r.iteration_time_s == pytest.approx(sum(r.breakdown_s.values()))
    assert r.tflops_per_gpu < peak


def _table1_hits():
    """Each Table 1 row on a DGX A100 / HDR design, run as the authors ran it: micro-batch size and
    interleaved stages from their reproduction script (columns micro_batch and interleave, see
    ``run_config_source`` in the data file), everything else from the catalog preset."""
    cols = TABLE1["columns"]
    hits, report = 0, []
    for values in TABLE1["rows"]:
        row = dict(zip(cols, values))
        d = cluster(row["gpus"] // 8, server_model="dgx-a100", nic_Gbps=200, switch_model="qm8700",
                    servers_per_leaf=20, spines=20)
        r = run(d, CAT, workload=row["catalog_id"], micro_batch=row["micro_batch"],
                interleave=row["interleave"], scenario={"routing": "adaptive", "checkpoint_interval_s": 0})
        err = r.tflops_per_gpu / row["tflops_per_gpu"] - 1
        report.append(f"{row['catalog_id']}: {r.tflops_per_gpu:.0f} vs {row['tflops_per_gpu']} ({100 * err:+.0f}%)")
        hits += abs(err) <= 0.10
    return hits, "; ".join(report)


def test_table1_tflops_within_10_percent_on_8_of_10_rows():
    """Issue 3 acceptance: predicted TFLOP/s per GPU within ±10% of Megatron-LM Table 1 on at least
    8 of its 10 rows, with the single catalog gemm_efficiency of the A100 (no per-row tuning)."""
    hits, report = _table1_hits()
    assert hits >= 8, report


def test_ring_flows_join_the_same_rail_of_consecutive_servers():
    from designer.engine.placement import place, servers_of
    from designer.engine.traffic import ring_flows
    from designer.engine.workload import Workload

    d = cluster(3, rails=2, servers_per_leaf=1, spines=1)
    pl = place(Workload(tp=1, pp=1, dp=24, global_batch=24), servers_of(d, CAT))
    f = ring_flows(pl, "dp")
    # GPUs 0-3 of a server use NIC 0, GPUs 4-7 NIC 1; the DP group of all 24 GPUs spans 3 servers
    # with 8 GPUs each: 8 rings (one per local GPU) of 3 hops
    assert len(f.src) == 24
    assert list(zip(f.src[:3], f.dst[:3])) == [("nic-0-0", "nic-1-0"), ("nic-1-0", "nic-2-0"),
                                                ("nic-2-0", "nic-0-0")]
    assert (f.src[-1], f.dst[-1]) == ("nic-2-1", "nic-0-1")
    two = cluster(2, rails=1, servers_per_leaf=1, spines=1)
    f2 = ring_flows(place(Workload(tp=1, pp=1, dp=16, global_batch=16), servers_of(two, CAT)), "dp")
    assert len(f2.src) == 16  # 8 rings of two servers, each pair in both directions


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "designer.cli", *args], capture_output=True, text=True,
                          cwd=Path(__file__).parent.parent)


def test_cli_run_json_and_training_time_override(tmp_path):
    from designer.topology import fileformat

    d = cluster(4, servers_per_leaf=2, spines=2)
    path = tmp_path / "d.json"
    fileformat.save(d, path)
    p = _cli("run", str(path), "--workload", "megatron-gpt-3.6b", "--dp", "16", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    for key in ("iteration_time_s", "breakdown_s", "tflops_per_gpu", "mfu", "tokens_per_s",
                "training_time_days", "collectives", "links", "bottlenecks"):
        assert key in out
    est = TABLE1["training_time_estimates"][0]
    p = _cli("run", str(path), "--workload", "gpt3-175b", "--tp", "8", "--pp", "2", "--dp", "2",
             "--global-batch", "64", "--tokens", str(est["tokens"]), "--tflops-per-gpu",
             str(est["tflops_per_gpu"]), "--json")
    assert p.returncode == 0, p.stderr
    days = json.loads(p.stdout)["training_time_days"]
    # the design has 32 GPUs; eq. 4 scales as 1/n, so compare at the paper's 1024 GPUs
    assert days * 32 / est["gpus"] == pytest.approx(est["days"], rel=0.05)
    bad = _cli("run", str(path), "--tp", "3")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and bad.stderr.count("\n") == 1


def test_the_design_seed_is_the_default_and_a_bad_seed_is_a_usage_error():
    from designer.errors import UsageError

    design = cluster(servers=4)
    design.scenario["seed"] = 5
    default, given = run(design, CAT), run(design, CAT, seed=5)
    assert default.to_json() == given.to_json()
    for bad in (-1, 2 ** 64, 1.5):
        with pytest.raises(UsageError, match="seed must be a whole number from 0"):
            run(design, CAT, seed=bad)
    design.scenario["seed"] = -3
    with pytest.raises(UsageError, match="scenario seed"):
        run(design, CAT)
