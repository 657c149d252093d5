"""The run view's "Engine results": after a run it shows the engine's figures host vs DPU (the
compare table), why they differ, the bottlenecks and, with several jobs, what sharing costs."""

import re

import pytest

pytest.importorskip("pytestqt")

from designer.engine.compare import loading  # noqa: E402
from designer.paths import resources_dir  # noqa: E402
from designer.topology import fileformat, templates  # noqa: E402
from designer.topology.catalog import load_catalog  # noqa: E402

CAT = load_catalog()


def shared_fabric(placement="scattered", tenants=2):
    """12 eight-NIC servers on 32-port leaves at 3:1 (as tests/test_tenants.py builds it), two jobs;
    a short sequence keeps compute small so the gradient all-reduce is exposed."""
    design = templates.leaf_spine(servers=12, oversubscription=3, switch="generic-leaf",
                                  storage="none", catalog=CAT)
    design.workload.update(preset="llama3-8b", tp=8, seq_len=1024, global_batch=12)
    design.scenario.update(tenants=tenants, tenant_placement=placement)
    return design


@pytest.fixture()
def view(run_view):
    return run_view


def run_engine(view, qtbot, design):
    """Run ``design`` in the view until the engine's results are in; the timelines are not needed."""
    view.set_design(design, CAT)
    got = []
    view.result_ready.connect(lambda *args: got.append(args))
    view.run_button.click()
    qtbot.waitUntil(lambda: bool(got) or view.status.text().startswith("Error"), timeout=30_000)
    assert got, view.status.text()
    view.cancel(wait=True)
    return got[0]


def cells(view, label):
    """The texts of the engine-results row labelled ``label``, one per column after the label."""
    row = view.engine.row_of(label)
    assert row >= 0, f"no row '{label}' in {[r.label for r in view.engine.rows]}"
    table = view.engine.table
    return [table.item(row, c).text() for c in range(1, table.columnCount())]


def number(text):
    return float(re.sub(r"[^0-9.eE+-]", "", text.replace("\u2212", "-")))


def column_of(view, title):
    table = view.engine.table
    heads = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    return heads.index(title) - 1  # index into cells()


def test_scattered_jobs_show_their_slowdown_and_where_they_meet(view, qtbot):
    host, dpu = run_engine(view, qtbot, shared_fabric())
    assert host.tenants["jobs"] == 2 and host.tenants["slowdown_pct"] > 1  # premise: they contend
    h, d = column_of(view, "host-managed"), column_of(view, "DPU-offloaded")
    it = cells(view, "Iteration time (s)")
    assert number(it[h]) == pytest.approx(host.iteration_time_s, rel=1e-3)
    assert number(it[d]) == pytest.approx(dpu.iteration_time_s, rel=1e-3)
    # the jobs rows: the slowest job shared vs alone; sharing can only slow it down
    shared, alone = cells(view, "Iteration shared (s)"), cells(view, "Iteration alone (s)")
    slow = cells(view, "Slowdown from sharing")
    for col, r in ((h, host), (d, dpu)):
        assert number(shared[col]) == pytest.approx(r.tenants["iteration_shared_s"], rel=1e-3)
        assert number(alone[col]) == pytest.approx(r.tenants["iteration_alone_s"], rel=1e-3)
        assert number(slow[col]) == pytest.approx(r.tenants["slowdown_pct"], abs=0.05)
        assert number(shared[col]) > number(alone[col])
    assert "scattered" in cells(view, "Servers per job, placement")[h]
    text = view.engine.text.toPlainText()
    assert "jobs meet on" in text
    for b in host.bottlenecks:
        assert b[:60] in text
    # clearing (a new document, a new run) empties the table and the text
    view.clear_results()
    assert view.engine.table.rowCount() == 0 and view.engine.rows == []
    assert "jobs meet on" not in view.engine.text.toPlainText()


def test_one_job_has_no_jobs_rows(view, qtbot):
    run_engine(view, qtbot, shared_fabric(tenants=1))
    assert view.engine.row_of("Iteration time (s)") >= 0
    assert view.engine.row_of("Slowdown from sharing") == -1
    assert not any(r.label.startswith("Jobs") for r in view.engine.rows)


def test_offloading_shows_its_difference_and_gives_the_loaders_cores(view, qtbot):
    design = fileformat.load(resources_dir() / "examples" / "example.json")
    design.scenario["encryption"] = True  # host-managed encryption costs host cycles
    host, dpu = run_engine(view, qtbot, design)
    assert host.iteration_time_s != dpu.iteration_time_s
    h, d = column_of(view, "host-managed"), column_of(view, "DPU-offloaded")
    delta = column_of(view, "DPU − host")
    it = cells(view, "Iteration time (s)")
    # the difference of the figures as shown, "equal" when they read the same (services.style)
    from designer.services.style import delta as shown_delta

    assert it[delta] == shown_delta("seconds", host.iteration_time_s, dpu.iteration_time_s)
    infra = cells(view, "Infrastructure stacks")
    assert number(infra[h]) > number(infra[d])  # the DPU runs the stacks
    need_free = [tuple(number(v) for v in cells(view, "Loader cores need / free")[c].split("/"))
                 for c in (h, d)]
    assert need_free[1][1] >= need_free[0][1]  # the stacks' cores go to the loaders
    assert need_free[0] == pytest.approx((loading(host)["load_cores_needed"],
                                          loading(host)["load_cores_free"]), abs=0.05)
    assert number(cells(view, "Data loading")[h]) >= 0
    text = view.engine.text.toPlainText()
    assert "Why host-managed and DPU-offloaded differ" in text
    assert "host CPU infrastructure share" in text  # the engine's reason line
    assert not any(r.label.startswith("Jobs") for r in view.engine.rows)


def test_figures_are_not_cut_at_the_views_size(view, qtbot):
    run_engine(view, qtbot, shared_fabric())
    view.tabs.setCurrentWidget(view.engine)  # what the user looks at
    table = view.engine.table
    qtbot.wait(50)  # the layout has its sizes
    metrics = table.fontMetrics()
    # every column is in view without scrolling sideways ...
    assert sum(table.columnWidth(c) for c in range(table.columnCount())) <= table.viewport().width()
    # ... and wide enough for its texts on one line
    for i, row in enumerate(view.engine.rows):
        if row.is_group:
            continue
        for col in range(table.columnCount()):
            item = table.item(i, col)
            assert metrics.horizontalAdvance(item.text()) <= table.columnWidth(col), (row.label, col)


def test_memory_per_gpu_reads_as_run_prints_it(view, qtbot):
    """The Engine results show memory per GPU, its parts, the GPU's memory and whether it fits with
    the names and values of ``dpu-designer run`` (issue 22: one number per fact)."""
    from designer.commands.run import memory_lines

    host, _ = run_engine(view, qtbot, shared_fabric(tenants=1))
    h = column_of(view, "host-managed")
    lines = memory_lines(host)
    total = cells(view, "Memory per GPU (GB)")[h]
    assert number(total) == pytest.approx(host.memory_per_gpu_GB, abs=0.05)
    assert lines[0].startswith("memory per GPU") and f" {total} GB" in lines[0]
    shown = [k for k, v in host.memory_parts_GB.items() if round(v, 1) > 0]
    assert {"weights", "optimizer", "activations"} <= set(shown)
    for key in shown:  # each part: the row's value is the one run prints beside its name
        name = key.replace("_", " ")
        assert f"{name} {cells(view, name)[h]}" in lines[0]
    cap = cells(view, "GPU memory (GB)")[h]
    assert number(cap) == pytest.approx(host.gpu_memory_GB, abs=0.05) and host.gpu_memory_GB > 0
    assert f" {cap} GB  (fits: yes)" in lines[-1]
    assert cells(view, "Fits in GPU memory")[h] == "yes"
    text = view.engine.text.toPlainText()
    assert f"memory per GPU {total} GB of {cap} GB GPU memory (fits: yes)" in text
    assert re.search(r"micro-batch(es)? in flight", text)


def test_a_layout_over_the_gpus_memory_says_by_how_much(view, qtbot):
    design = shared_fabric(tenants=1)
    design.workload.update(tp=1, global_batch=96, optimizer_sharded=False)  # 18 bytes x 8B on one GPU
    host, _ = run_engine(view, qtbot, design)
    assert host.memory_per_gpu_GB > host.gpu_memory_GB  # premise
    h = column_of(view, "host-managed")
    fits = cells(view, "Fits in GPU memory")[h]
    over = number(cells(view, "Memory per GPU (GB)")[h]) - number(cells(view, "GPU memory (GB)")[h])
    assert fits.startswith("no: ") and fits.endswith(" GB over")
    assert number(fits.split()[1]) == pytest.approx(over, abs=1e-6)


def test_the_cpu_optimizer_step_row_explains_its_parts(view, qtbot):
    """With the optimizer on the host CPU the breakdown has its row, named as run names it, with
    the value run prints and its parts in the tip (issue 22)."""
    from designer.report.names import optimizer_offload_text

    design = shared_fabric(tenants=1)
    design.workload.update(optimizer_cpu_offload=True)
    host, _ = run_engine(view, qtbot, design)
    h = column_of(view, "host-managed")
    value = cells(view, "CPU optimizer step")[h]
    assert number(value) == pytest.approx(host.breakdown_s["optimizer_offload"], abs=5e-4) and number(value) > 0
    row = view.engine.rows[view.engine.row_of("CPU optimizer step")]
    assert optimizer_offload_text(host.optimizer_offload) in row.tip
