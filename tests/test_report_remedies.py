"""Remedies match the engine's adapter-engine sentences under every owner name it uses."""

import ast
import inspect
import re
import textwrap

import pytest

from designer.engine import resources
from designer.engine.result import BREAKDOWN_KEYS
from designer.report.remedies import BREAKDOWN_REMEDY, ENGINE_OWNERS, PATTERN_REMEDY, remedy


def _owner_names_in_engine() -> set[str]:
    """Every string the engine's ``owner()`` helpers (in ``resources._explain`` and, for the
    host-managed servers' NICs, ``resources._group_sentences``) can return."""
    names = set()
    for fn in (resources._explain, resources._group_sentences):
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
        owner = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "owner")
        for ret in (n for n in ast.walk(owner) if isinstance(n, ast.Return)):
            tested = {id(c) for t in ast.walk(ret.value) if isinstance(t, ast.Compare)
                      for c in ast.walk(t)}  # "host" in `"NIC" if mode == "host" else ...`
            names |= {c.value for c in ast.walk(ret.value) if isinstance(c, ast.Constant)
                      and isinstance(c.value, str) and id(c) not in tested}
    return names


def test_the_owner_list_is_the_engines():
    # a new owner name in the engine must be added to ENGINE_OWNERS (else its advice is lost)
    assert _owner_names_in_engine() == set(ENGINE_OWNERS)


def _engine_sentences(owner: str, engine: str) -> list[str]:
    """The two sentence shapes resources._explain writes about an over-subscribed engine."""
    who = "server group 0 (8 x DPU-offloaded)"
    return [f"{owner} {engine} engine on {who} is over-subscribed 1.40x: collectives take 1.20x as long",
            f"{owner} {engine} engine on {who} is over-subscribed 1.40x: "
            f"{resources._ENGINE_WORK[engine]} runs 1.40x slower than asked"]


@pytest.mark.parametrize("owner", sorted(_owner_names_in_engine()))
@pytest.mark.parametrize("engine", sorted(resources._ENGINE_WORK))
def test_every_owner_and_engine_gets_that_engines_advice(owner, engine):
    expected = {"crypto": "crypto rate", "arm": "Arm cores", "dram": "memory bandwidth",
                "line": "line rate", "eswitch": "packet rate"}[engine]
    for sentence in _engine_sentences(owner, engine):
        advice = remedy(sentence)
        assert expected in advice, (sentence, advice)


def test_engine_patterns_do_not_fire_on_other_words():
    # "SmartNIC crypto" as a storage read limit is a storage problem, not an engine one
    assert remedy("data stall 0.2 s per iteration: storage reads limited by SmartNIC crypto at "
                  "3 GB/s per server") == BREAKDOWN_REMEDY["data_stall"]
    assert not any(p.search("NONDPU crypto engine") for p, _ in PATTERN_REMEDY[:4])


def test_every_breakdown_part_but_compute_has_a_remedy():
    for key in BREAKDOWN_KEYS:
        if key != "compute":
            assert BREAKDOWN_REMEDY.get(key), key
    assert not re.search(r"\bA DPU model\b", BREAKDOWN_REMEDY["dpu_slowdown"])


def test_a_host_runs_nic_eswitch_sentence_gets_the_packet_advice():
    # the sentence as a real host-managed run writes it (64-byte tenant packets over SR-IOV)
    from designer.engine.resources import ResourceInputs, ServerGroup
    from tests.test_dpu_limits import one
    rep = one(ResourceInputs(groups=(ServerGroup(
        scenario="host", eswitch_pps=90e6, count=1, rdma_bytes=11.52e9, comm_s=0.5, isolated=True,
        tenant_packet_bytes=64),), iteration_s=1.0))
    nic = [b for b in rep.bottlenecks if b.startswith("NIC eswitch engine")]
    assert nic
    for b in nic:
        assert "packet rate" in remedy(b) and "larger packets" in remedy(b), b
