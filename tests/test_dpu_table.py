"""Issue 21: bench/dpu_table.py (the README's "where a DPU beats a SmartNIC") is built from
compare runs, and each row's figures come from their parts: the runs' iteration times, the
catalog figure of the deciding limit with the kind its source gives it."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).absolute().parent.parent / "bench"))

import dpu_table  # noqa: E402
from designer.engine.compare import compare  # noqa: E402
from designer.topology.catalog import figure_kind, load_catalog  # noqa: E402

CAT = load_catalog()


@pytest.fixture(scope="module")
def rows():
    return {name: dpu_table.row(name, make(), kw, CAT) for name, make, kw in dpu_table.CASES}


def test_each_row_is_the_compare_run_of_its_case(rows):
    name, make, kw = dpu_table.CASES[3]  # encrypted fabric
    cmp = compare(make(), CAT, **kw)
    r = rows[name]
    for m in ("host", "smartnic", "dpu"):
        assert r["iteration_s"][m] == cmp.runs[m].iteration_time_s
    assert r["dpu_vs_smartnic_iteration_pct"] == pytest.approx(
        100 * (cmp.runs["dpu"].iteration_time_s / cmp.runs["smartnic"].iteration_time_s - 1))
    assert r["dpu_beats_smartnic"] == (r["dpu_vs_smartnic_iteration_pct"] < -0.05)


def test_deciding_limits_carry_the_catalog_figure_kind_and_source(rows):
    for r in rows.values():
        for mode, lim in r["limits"].items():
            if lim["figure"] and "x" not in lim["figure"]:
                kind = {"host CPU": None}.get(lim["model"], "dpu" if mode == "dpu" else "nic")
                if kind and lim["figure"] != "read_GBps":
                    assert lim["value"] == CAT.get(kind, lim["model"])[lim["figure"]]
                    assert lim["source"] == CAT.source_of(kind, lim["model"], lim["figure"])
                assert lim["kind"] == figure_kind(lim["source"])


def test_multi_tenant_row_is_decided_by_the_hosts_own_tcp_packets(rows):
    # 64-byte tenant packets over kernel TCP: the host's own TCP stack pays per packet in every
    # mode (a SmartNIC or DPU switches and filters the packets, it does not run the host's
    # sockets), so the per-packet figure (an assumption, said so) decides both offloaded runs;
    # the embedded switch is over-subscribed behind it, and offloading the switch and firewall
    # still leaves the offloaded runs far faster than the host-managed one
    r = rows[dpu_table.CASES[0][0]]
    for mode in ("smartnic", "dpu"):
        lim = r["limits"][mode]
        assert lim["figure"] == "tcp_cycles_per_packet" and lim["kind"] == "assumed", lim
        assert lim["limit"].startswith("host CPU: network")
    assert r["dpu_engines"]["eswitch"] > 1.0
    assert r["iteration_s"]["host"] > 2 * max(r["iteration_s"]["smartnic"], r["iteration_s"]["dpu"])


def test_encrypted_fabric_row_names_each_crypto_engine(rows):
    r = rows[dpu_table.CASES[3][0]]
    frac = CAT.costs("dpu")["inline_crypto_fraction_of_line"]["value"]
    assert r["limits"]["smartnic"]["value"] == pytest.approx(frac * 400)  # ConnectX-7's crypto-enabled part
    assert r["limits"]["dpu"]["value"] == CAT.get("dpu", "bluefield-3")["crypto_Gbps"]
    assert r["limits"]["dpu"]["kind"] == "measured, tuning limit"


def test_markdown_has_one_line_per_case(rows):
    text = dpu_table.markdown(list(rows.values()))
    assert text.count("\n") == len(dpu_table.CASES) + 1
    for name, _, _ in dpu_table.CASES:
        assert f"| {name} |" in text


def test_readme_table_is_the_scripts_output(rows):
    # the README's "Where a DPU beats a SmartNIC" table is pasted from `python bench/dpu_table.py`;
    # when the engine's figures move, regenerate it with that command
    readme = (Path(__file__).absolute().parent.parent / "README.md").read_text(encoding="utf-8")
    for line in dpu_table.markdown(list(rows.values())).splitlines():
        assert line in readme, f"README row out of date (run python bench/dpu_table.py): {line[:80]}"
