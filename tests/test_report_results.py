"""The PDF report carries the engine's data-loading figures, why the runs differ and, with several
jobs on the fabric, what sharing costs the slowest job (text read back with pypdf)."""

import re
import unicodedata

import pytest

from designer.services.style import figure
from pypdf import PdfReader

from designer.engine.compare import compare, loading
from designer.paths import resources_dir
from designer.report.build import build_report
from designer.topology import fileformat, templates
from designer.topology.catalog import load_catalog

CAT = load_catalog()
EXAMPLE = resources_dir() / "examples" / "example.json"


def _words(text: str) -> str:
    """pypdf separates words with tabs or newlines and keeps ligatures: plain single-spaced text."""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text))


def pdf_pages(path) -> list[str]:
    return [_words(p.extract_text()) for p in PdfReader(str(path)).pages]


def page_starting(pages: list[str], title: str) -> str:
    return next(p for p in pages if p.lstrip().startswith(title))


def section_text(pages: list[str], title: str) -> str:
    """The pages of the section ``title``: from the page it starts on to the next section's."""
    from designer.report.build import SECTIONS

    start = next(i for i, p in enumerate(pages) if p.lstrip().startswith(title))
    end = next((i for i in range(start + 1, len(pages))
                if any(pages[i].lstrip().startswith(t) for t in SECTIONS)), len(pages))
    return " ".join(pages[start:end])


def number(text: str) -> float:
    return float(text.replace(",", "").replace("\u2212", "-"))


def shared_fabric():
    """Two jobs scattered over an oversubscribed leaf-spine (as tests/test_tenants.py builds it)."""
    design = templates.leaf_spine(servers=12, oversubscription=3, switch="generic-leaf",
                                  storage="none", catalog=CAT)
    design.workload.update(preset="llama3-8b", tp=8, seq_len=1024, global_batch=12)
    design.scenario.update(tenants=2, tenant_placement="scattered")
    return design


@pytest.fixture(scope="module")
def encrypted():
    """The example with in-flight encryption: the host-managed stacks take cores from the loaders."""
    design = fileformat.load(EXAMPLE)
    design.scenario["encryption"] = True
    return design


@pytest.fixture(scope="module")
def encrypted_pages(qapp, tmp_path_factory, encrypted):
    out = tmp_path_factory.mktemp("report") / "r.pdf"
    build_report(encrypted, CAT, out, date="2025-01-31")
    return pdf_pages(out)


@pytest.fixture(scope="module")
def shared_pages(qapp, tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "r.pdf"
    build_report(shared_fabric(), CAT, out, date="2025-01-31")
    return pdf_pages(out)


def test_comparison_has_the_loader_cores_and_the_data_loading_share(encrypted_pages, encrypted):
    cmp = compare(encrypted, CAT)
    page = page_starting(encrypted_pages, "Host vs SmartNIC vs DPU")
    row = re.search(r"Data-loader cores needed / free per server (\S+) / (\S+) (\S+) / (\S+) "
                    r"(\S+) / (\S+)", page)
    assert row, page[:600]
    host_need, host_free, nic_need, nic_free, dpu_need, dpu_free = map(number, row.groups())
    for need, free, run in ((host_need, host_free, "host"), (nic_need, nic_free, "smartnic"),
                            (dpu_need, dpu_free, "dpu")):
        group = loading(cmp.runs[run])
        assert (need, free) == pytest.approx((group["load_cores_needed"], group["load_cores_free"]),
                                             abs=0.05)
    assert dpu_free > host_free  # the stacks' cores go to the loaders when the DPU runs them
    share = re.search(r"Host CPU cycles on data loading \(%\) (\S+) (\S+) (\S+)", page)
    assert share, page[:600]
    for value, run in zip(share.groups(), ("host", "smartnic", "dpu")):
        expected = 100 * cmp.runs[run].host_cpu["by_task"]["data_loading"]
        assert value == figure("percent", expected)  # at the one precision compare prints it
    # the engine's reasons follow the tables (on the next page when they do not fit)
    section = section_text(encrypted_pages, "Host vs SmartNIC vs DPU")
    assert "Why they differ" in section
    for reason in cmp.reasons:
        assert _words(reason)[:50] in section
    # one job: no jobs block anywhere
    assert not any("Jobs sharing the fabric" in p for p in encrypted_pages)


def test_several_jobs_show_shared_and_alone(shared_pages):
    cmp = compare(shared_fabric(), CAT)
    t = cmp.runs["host"].tenants
    assert t["jobs"] == 2 and t["slowdown_pct"] > 1  # premise: the scattered jobs contend
    page = page_starting(shared_pages, "Results")
    assert "Jobs sharing the fabric" in page
    assert f"{t['jobs']} jobs of {t['servers_per_job']} servers each, scattered placement" in page
    shared = re.search(r"Iteration time, shared \(s\) (\S+) (\S+) (\S+)", page)
    alone = re.search(r"Iteration time, alone \(s\) (\S+) (\S+) (\S+)", page)
    slowdown = re.search(r"Slowdown from sharing (\S+) % (\S+) % (\S+) %", page)
    assert shared and alone and slowdown, page[:800]
    for i, run in enumerate(("host", "smartnic", "dpu")):
        tj = cmp.runs[run].tenants
        assert number(shared.group(i + 1)) == pytest.approx(tj["iteration_shared_s"], rel=5e-3)
        assert number(alone.group(i + 1)) == pytest.approx(tj["iteration_alone_s"], rel=5e-3)
        assert number(slowdown.group(i + 1)) == pytest.approx(tj["slowdown_pct"], abs=0.05)
        assert number(shared.group(i + 1)) > number(alone.group(i + 1))
    rates = re.search(r"Data-parallel group rate, shared \(GB/s\) (\S+) .*?"
                      r"Data-parallel group rate, alone \(GB/s\) (\S+)", page)
    assert rates and number(rates.group(1)) < number(rates.group(2))
    # the bottleneck that says where the jobs meet is in the report too
    assert "jobs meet on" in page_starting(shared_pages, "Bottlenecks")


def test_memory_per_gpu_reads_as_run_prints_it(encrypted_pages, encrypted):
    """The Results section shows memory per GPU, its parts, the GPU's memory and whether it fits
    with the names and values ``dpu-designer run`` prints (issue 22: one number per fact)."""
    from designer.commands.run import memory_lines

    r = compare(encrypted, CAT).runs["host"]
    assert r.memory_per_gpu_GB is not None and r.gpu_memory_GB  # premise: the example has parameters
    lines = memory_lines(r)
    section = section_text(encrypted_pages, "Results")
    total = figure("GB", r.memory_per_gpu_GB)
    assert f"Memory per GPU (GB) {total} {total} {total}" in section  # the same in every mode
    assert f"memory per GPU" in lines[0] and f" {total} GB" in lines[0]
    for key, value in r.memory_parts_GB.items():
        if round(value, 1) > 0:
            name = key.replace("_", " ")
            v = figure("GB", value)
            assert f"{name} {v} {v} {v}" in section and f"{name} {v}" in lines[0]
    cap = figure("GB", r.gpu_memory_GB)
    assert f"GPU memory (GB) {cap} {cap} {cap}" in section and f" {cap} GB" in lines[-1]
    fits = "yes" if r.memory_per_gpu_GB <= r.gpu_memory_GB else "no"
    assert re.search(rf"Fits in GPU memory {fits}\S* ", section)
    assert _words(f" in flight, recompute {r.memory_activations['recompute']}") in section


def test_fits_text_says_by_how_much_a_layout_is_over():
    """``names.fits_text``: the difference of the two figures as shown, "–" without a capacity."""
    from designer.report.names import fits_text, memory_rows

    assert fits_text({"memory_per_gpu_GB": 90.04, "gpu_memory_GB": 85.89934592}) == "no: 4.1 GB over"
    assert fits_text({"memory_per_gpu_GB": 85.9, "gpu_memory_GB": 85.89934592}) == "yes"
    assert fits_text({"memory_per_gpu_GB": 40.0, "gpu_memory_GB": None}) == "–"
    assert memory_rows({"memory_per_gpu_GB": None}) == []
    rows = memory_rows({"memory_per_gpu_GB": 3.0, "memory_parts_GB": {"weights": 2.0, "output_layer": 1.0,
                                                                      "buffers": 0.0},
                        "gpu_memory_GB": 85.9})
    assert [(n, v) for n, v, _t, _i in rows] == [("memory per GPU (GB)", "3.0"), ("weights", "2.0"),
                                                ("output layer", "1.0"), ("GPU memory (GB)", "85.9"),
                                                ("fits in GPU memory", "yes")]


def test_offload_parts_show_in_the_breakdown_only_when_asked():
    """The report's breakdown leaves out the zero offload parts of a workload that asks for none
    (as ``dpu-designer run`` does) and keeps them, zero or not, when it asks."""
    from designer.report.build import _meaningful_part

    def results(**workload):
        r = {"breakdown_s": {"activation_offload": 0.0, "optimizer_offload": 0.0, "bubble": 0.0},
             "workload": {"cp": 1, "ep": 1, **workload}}
        return {s: r for s in ("host", "smartnic", "dpu")}

    off = results()
    assert not _meaningful_part("activation_offload", off) and not _meaningful_part("optimizer_offload", off)
    assert _meaningful_part("bubble", off)  # other zero parts still show
    on = results(offload_layers=4, optimizer_cpu_offload=True)
    assert _meaningful_part("activation_offload", on) and _meaningful_part("optimizer_offload", on)


def test_the_cpu_optimizer_step_is_explained_under_the_breakdown():
    from designer.report.build import ReportData, _optimizer_offload
    from designer.report.names import optimizer_offload_text

    o = {"params": 117e6, "d2h_s": 0.009, "cpu_step_s": 0.055, "h2d_s": 0.009, "overlapped": True,
         "host_link_GBps": 50.4, "host_memory_GBps": 76.8}
    data = ReportData.__new__(ReportData)
    data.results = {"host": {"optimizer_offload": o}}
    (p,) = _optimizer_offload(data)
    assert "CPU optimizer step: " in p and _words(optimizer_offload_text(o)) in _words(p)
    data.results = {"host": {"optimizer_offload": {}}}
    assert _optimizer_offload(data) == []
