"""Several training jobs (``scenario.tenants``) sharing one fabric: split of the servers, contention
for links and SHARP trees, what the Result and ``dpu-designer run`` report."""

import json

import numpy as np
import pytest

from designer.cli import main
from designer.engine.pipeline import run
from designer.engine.placement import job_servers, place_jobs, servers_of
from designer.engine.workload import Workload
from designer.errors import UsageError
from designer.topology import fileformat, templates
from designer.topology.catalog import load_catalog

CAT = load_catalog()
#: a short sequence keeps compute small, so the gradient all-reduce (tp=8: across servers only) is
#: exposed and any change of its network rate shows in the iteration time
WORK = dict(workload="llama3-8b", tp=8, seq_len=1024)


def oversubscribed(servers=12):
    """Leaf-spine of 32-port Ethernet leaves at 3:1: 24 host ports, so 3 eight-NIC servers a leaf."""
    return templates.leaf_spine(servers=servers, oversubscription=3, switch="generic-leaf", storage="none",
                                catalog=CAT)


def leaves_of(design):
    """Server id -> the leaves its NICs are linked to."""
    topo = design.topology
    out = {}
    for srv in topo.servers():
        out[srv.id] = {l.b if l.a == a.id else l.a for a in topo.attached(srv.id) for l in topo.links_of(a.id)}
    return out


def job_leaves(design, jobs, how):
    ids = [s.id for s in design.topology.servers()]
    leaves = leaves_of(design)
    return [set().union(*(leaves[ids[i]] for i in idx)) for idx in job_servers(len(ids), jobs, how)]


def test_servers_are_split_packed_or_scattered_and_the_rest_stays_idle():
    assert [list(i) for i in job_servers(10, 3, "packed")] == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert [list(i) for i in job_servers(10, 3, "scattered")] == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    servers = servers_of(oversubscribed(6), CAT)
    w = Workload(tp=8, pp=1, dp=2, global_batch=2)
    pl = place_jobs(w, servers, jobs=3, how="scattered")
    # every job runs the whole workload on its own servers: 16 ranks each, groups never mixed
    assert np.bincount(pl.job).tolist() == [16, 16, 16]
    for dim, groups in pl.groups.items():
        assert (pl.job[groups] == pl.job[groups[:, :1]]).all(), dim
    assert sorted(set(pl.server[pl.job == 1].tolist())) == [1, 4]


def test_scattered_jobs_slow_each_other_on_an_oversubscribed_fabric_packed_ones_do_not():
    design = oversubscribed()
    packed, scattered = job_leaves(design, 2, "packed"), job_leaves(design, 2, "scattered")
    assert not packed[0] & packed[1]  # premise: packed jobs have leaves of their own
    assert scattered[0] == scattered[1]  # scattered ones share every leaf
    shared = run(design, CAT, scenario={"tenants": 2, "tenant_placement": "scattered"}, global_batch=12, **WORK)
    t = shared.tenants
    assert t["dp_rate_shared_GBps"] < t["dp_rate_alone_GBps"]
    assert t["iteration_shared_s"] > t["iteration_alone_s"] * 1.01
    assert t["iteration_shared_s"] == shared.iteration_time_s
    assert t["slowdown_pct"] == pytest.approx(100 * (t["iteration_shared_s"] / t["iteration_alone_s"] - 1))
    meet = [b for b in shared.bottlenecks if b.startswith("jobs meet on leaf-spine links")]
    assert meet and "packed placement" in meet[0], shared.bottlenecks
    own = run(design, CAT, scenario={"tenants": 2, "tenant_placement": "packed"}, global_batch=12, **WORK)
    t = own.tenants
    assert t["dp_rate_shared_GBps"] == pytest.approx(t["dp_rate_alone_GBps"])
    assert t["iteration_shared_s"] == pytest.approx(t["iteration_alone_s"], rel=0.01)
    assert not any(b.startswith("jobs meet") for b in own.bottlenecks)
    assert own.iteration_time_s < shared.iteration_time_s


def test_a_packed_job_on_its_own_leaves_runs_as_on_a_design_of_its_size():
    """Each job runs the workload on its share of the servers; power is its servers' plus its
    share of the switches, so the machine draws the jobs' sum."""
    whole = oversubscribed(12)
    two = run(whole, CAT, scenario={"tenants": 2}, global_batch=12, **WORK)
    half = run(oversubscribed(6), CAT, global_batch=12, **WORK)
    assert two.gpus == half.gpus == 48 and two.workload["dp"] == 6
    assert two.iteration_time_s == pytest.approx(half.iteration_time_s, rel=1e-9)
    assert two.placement["servers_used"] == 6
    one = run(whole, CAT, global_batch=24, **WORK)
    assert 2 * two.power_W["total"] == pytest.approx(one.power_W["total"])


def test_more_jobs_than_sharp_trees_turn_sharp_off_and_say_why():
    # SHARP reduces all-reduces: the optimizer is not sharded here (no reduce-scatter)
    WORK = {**globals()["WORK"], "optimizer_sharded": False}
    design = templates.rail_optimized(servers=8, switch="qm8700", storage="none", catalog=CAT)
    trees = CAT.get("switch", "qm8700")["sharp_trees"]
    assert trees < 2  # premise: two jobs' DP groups on one rail leaf are more than it holds
    one = run(design, CAT, global_batch=16, **WORK)
    (dp,) = [c for c in one.collectives if c.name == "dp_allreduce"]
    assert dp.algorithm == "sharp"
    two = run(design, CAT, scenario={"tenants": 2}, global_batch=8, **WORK)
    (dp,) = [c for c in two.collectives if c.name == "dp_allreduce"]
    assert dp.algorithm != "sharp"
    assert two.tenants["iteration_shared_s"] > two.tenants["iteration_alone_s"]
    why = [b for b in two.bottlenecks if b.startswith("SHARP off for the DP all-reduce")]
    assert why and "qm8700" in why[0] and f"holds {trees} aggregation tree" in why[0], two.bottlenecks
    # the same jobs on Quantum-2 switches, whose trees suffice, keep SHARP
    big = templates.rail_optimized(servers=8, switch="qm9700", storage="none", catalog=CAT)
    two = run(big, CAT, scenario={"tenants": 2}, global_batch=8, **WORK)
    assert [c.algorithm for c in two.collectives if c.name == "dp_allreduce"] == ["sharp"]
    assert not any("SHARP off" in b for b in two.bottlenecks)


def test_one_job_is_the_run_without_the_setting():
    design = oversubscribed()
    design.scenario.pop("tenants", None)
    design.scenario.pop("tenant_placement", None)
    plain = run(design, CAT, global_batch=24, **WORK)
    one = run(design, CAT, scenario={"tenants": 1, "tenant_placement": "scattered"}, global_batch=24, **WORK)
    assert one.tenants.pop("placement") == "scattered"  # with one job the setting changes nothing else
    plain.tenants.pop("placement")
    assert one.to_json() == plain.to_json()
    t = plain.tenants
    assert t["jobs"] == 1 and t["idle_servers"] == 0 and t["slowdown_pct"] == 0.0
    assert t["iteration_alone_s"] == t["iteration_shared_s"] == plain.iteration_time_s


def test_more_jobs_than_servers_is_refused_with_both_numbers():
    with pytest.raises(UsageError, match=r"tenants 13 is more than the design's 12 GPU servers.*"
                                         r"set tenants to 12 or fewer"):
        run(oversubscribed(), CAT, scenario={"tenants": 13}, **WORK)


def test_a_workload_too_big_for_one_job_names_the_job_size():
    with pytest.raises(UsageError, match=r"tenants 4: each job runs the workload on 3 servers, 24 GPUs"):
        run(oversubscribed(), CAT, scenario={"tenants": 4}, dp=12, global_batch=12, **WORK)


def test_leftover_servers_stay_idle_with_a_warning():
    r = run(oversubscribed(), CAT, scenario={"tenants": 5}, global_batch=4, **WORK)
    assert r.tenants["servers_per_job"] == 2 and r.tenants["idle_servers"] == 2
    assert r.gpus == 16 and r.placement["servers_used"] == 2
    idle = [w for w in r.warnings if "stay idle" in w]
    assert idle and "12 GPU servers" in idle[0] and "tenants 4 or 6" in idle[0], r.warnings


def test_jobs_are_deterministic_for_a_seed():
    design = templates.leaf_spine(servers=16, oversubscription=2, storage="converged", catalog=CAT)
    kw = dict(scenario={"tenants": 4, "tenant_placement": "scattered", "routing": "ecmp"},
              global_batch=8, **WORK)
    a, b = run(design, CAT, seed=7, **kw), run(design, CAT, seed=7, **kw)
    assert a.to_json() == b.to_json()
    json.dumps(a.to_json(), allow_nan=False)


def test_run_prints_a_jobs_section_and_json_carries_the_block(tmp_path, capsys):
    path = tmp_path / "d.json"
    fileformat.save(oversubscribed(), path)
    args = ["run", str(path), "--tp", "8", "--seq", "1024", "--global-batch", "12"]
    assert main(args + ["--set", "scenario.tenants=2", "--set", "scenario.tenant_placement=scattered"]) == 0
    out = capsys.readouterr().out
    assert "jobs                                2 x 6 servers, scattered" in out
    assert "shared" in out and "alone" in out
    assert main(args[:-1] + ["24"]) == 0
    assert "\njobs " not in capsys.readouterr().out
    assert main(args + ["--set", "scenario.tenants=2", "--json"]) == 0
    block = json.loads(capsys.readouterr().out)["tenants"]
    assert block["jobs"] == 2 and block["placement"] == "packed" and block["servers_per_job"] == 6
    assert main(args + ["--set", "scenario.tenants=13"]) == 2
    assert "more than the design's 12 GPU servers" in capsys.readouterr().err
