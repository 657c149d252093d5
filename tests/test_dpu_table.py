"""Issue 21: bench/dpu_table.py (the README's "where a DPU beats a SmartNIC") is built from
compare runs, and each row's figures come from their parts: the runs' iteration times, the
catalog figure of the deciding limit with the kind its source gives it."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).absolute().parent.parent / "bench"))

import dpu_table  # noqa: E402
from designer.topology.catalog import figure_kind, load_catalog  # noqa: E402

CAT = load_catalog()


@pytest.fixture(scope="module")
def rows():
    return {name: dpu_table.row(name, make(), kw, CAT) for name, make, kw in dpu_table.CASES}


def test_the_encrypted_rows_deciding_figure_follows_from_the_catalog(rows):
    # every byte the DPU's line engine carries is encrypted (IPsec crypto offload on the whole
    # fabric), so the crypto engine's load is the line load scaled by the two catalog rates:
    # line load x max_bandwidth_Gbps / crypto_Gbps (400 / 193, bluefield-3); the row's deciding
    # limit is that over-subscription, with the measured figure and its kind
    r = rows[dpu_table.CASES[3][0]]
    bf3 = CAT.get("dpu", "bluefield-3")
    loads = r["dpu_engines"]
    assert loads["crypto"] == pytest.approx(loads["line"] * bf3["max_bandwidth_Gbps"] / bf3["crypto_Gbps"],
                                            rel=1e-9)
    assert loads["crypto"] > 1.0 > loads["line"]
    lim = r["limits"]["dpu"]
    assert lim["limit"] == f"crypto engine over-subscribed {loads['crypto']:.2f}x"
    assert (lim["model"], lim["figure"], lim["value"]) == ("bluefield-3", "crypto_Gbps", 193)
    # the verdict is the row's own iteration times: no faster unless more than 0.05% quicker
    it = r["iteration_s"]
    assert r["dpu_vs_smartnic_iteration_pct"] == pytest.approx(100 * (it["dpu"] / it["smartnic"] - 1))
    assert r["dpu_beats_smartnic"] == (it["dpu"] < it["smartnic"] * (1 - 5e-4))


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
    # sockets), so the per-packet figure (a measured lower bound, said so) decides both
    # offloaded runs;
    # the embedded switch is over-subscribed behind it, and offloading the switch and firewall
    # still leaves the offloaded runs far faster than the host-managed one
    r = rows[dpu_table.CASES[0][0]]
    for mode in ("smartnic", "dpu"):
        lim = r["limits"][mode]
        assert lim["figure"] == "tcp_cycles_per_packet" and lim["kind"] == "derived", lim
        assert "measurement" in lim["source"] and "lower bound" in lim["source"]
        assert lim["limit"].startswith("host CPU: network")
    assert r["dpu_engines"]["eswitch"] > 1.0
    assert r["iteration_s"]["host"] > 2 * max(r["iteration_s"]["smartnic"], r["iteration_s"]["dpu"])


def test_encrypted_fabric_row_names_each_crypto_engine(rows):
    r = rows[dpu_table.CASES[3][0]]
    frac = CAT.costs("dpu")["inline_crypto_fraction_of_line"]["value"]
    # ConnectX-7's crypto-enabled part: the same engine, the same 193 Gb/s as the BlueField-3
    assert r["limits"]["smartnic"]["value"] == pytest.approx(frac * 400, rel=1e-12)
    assert r["limits"]["smartnic"]["value"] == pytest.approx(CAT.get("dpu", "bluefield-3")["crypto_Gbps"],
                                                             rel=1e-12)
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
