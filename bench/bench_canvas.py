"""Canvas scale: open a 2,048-server rail-optimized design (16,384 GPUs, 42,016 cables) in the window
and time pan and zoom frames (whole-viewport repaints, 1600 x 1000 window), without and with the
utilization overlay, including the frames that draw the cables sharp after a zoom, a few tiles a
frame. Target: open < 3 s, every frame < 50 ms at every zoom, also after a jump between the zooms
(older tiles, scaled, or the picture of all cables far out stand in while the new ones are drawn a
few a frame; far out that picture is drawn in batches), after an edit (the tiles its cables
meet drawn anew at once) and during a drag at "zoom to fit" (the dragged cables drawn over a
picture of the others).

    QT_QPA_PLATFORM=offscreen python bench/bench_canvas.py [SERVERS]
    QT_QPA_PLATFORM=offscreen python bench/bench_canvas.py --repeat [RUNS [SERVERS]]

The first pass is without the overview map (hidden), the second with it, the third with the
overlay; the overview map's own drawing is timed once. Each run ends with a ``SUMMARY`` line
(JSON: the worst frame of each part, the longest wait until the view is sharp, the open and
problems-list times); ``--repeat`` runs the bench that many times (3 by default), a process each,
and prints each figure's median and the runs' values.

``--screenshot [SERVERS] [--design FILE]`` measures ``dpu-designer FILE --screenshot`` on a
~250k-component design instead (20,448 servers by default, as bench/bench_large.py builds it; issue
#14 target < 30 s on this machine): the whole process (wall and CPU time, peak memory), then the
same steps in this process by phase (CPU time: load, window and scene, first paint and the design
check, grab). The loader's file-size and component limits are lifted in both, as bench_large does.
A design over ``app.SCREENSHOT_CHECK_MAX`` components is pictured unchecked, without the run view
(as ``--screenshot`` does); zoomed out, its NIC/DPU badges have no items yet (``DesignScene``).
"""

from __future__ import annotations

import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEvent, QObject  # noqa: E402 - after the platform is chosen


def frame_ms(view) -> float:
    t = time.perf_counter()
    view.viewport().repaint()
    return (time.perf_counter() - t) * 1000


class FirstPaint(QObject):
    """Notes when a widget is first painted (``at``: perf_counter time)."""

    def __init__(self, widget) -> None:
        super().__init__(widget)
        self.at = None
        widget.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        if self.at is None and event.type() == QEvent.Paint:
            self.at = time.perf_counter()
        return False


def until_sharp(view) -> list[float]:
    """Frames (ms) from now until the cable layer has drawn every tile in view sharp and the
    badges in view are made: the first, then the progressive ones its refinement timer (and the
    view, for the badges) would ask for (here at once, whole-viewport)."""
    cables = view.dscene.cables
    frames = [frame_ms(view)]
    while (cables.refining or view.badges_pending) and len(frames) < 500:
        frames.append(frame_ms(view))
    return frames


def sharp_text(frames: list[float]) -> str:
    return f"worst frame {max(frames):.1f} ms, sharp after {len(frames)} frames / {sum(frames):.0f} ms"


#: the worst frame (ms) and the longest wait until sharp (ms) of each part, for the summary
SUMMARY: dict[str, float] = {}


def note(key: str, value: float) -> None:
    SUMMARY[key] = max(SUMMARY.get(key, 0.0), value)


def report_frames(window, what: str) -> float:
    """Frames at four zoom levels: a pan (a drag of 60 px steps, 12 to the right then 8 down, so
    that it uncovers new ground); zoom steps about the centre in a quick run (a wheel turning) and
    the frames that draw the cables sharp once the zoom rests; a single step in and a single step
    out after a pause, until sharp. Returns the worst frame seen after arriving at each zoom."""
    view = window.view
    cables = window.scene.cables
    worst = 0.0
    for label, scale in (("fit", None), ("25 %", 0.25), ("50 %", 0.5), ("100 %", 1.0)):
        view.zoom_reset()  # through the view's own zoom calls: its level-of-detail settings follow
        if scale is None:
            view.zoom_to_fit()
        elif scale != 1.0:
            view.zoom(scale)
        view.centerOn(window.scene.content_rect().center())
        cables.settle()  # as after a pause at this zoom
        arrive = until_sharp(view)  # a jump from the last zoom
        pans = []
        for i in range(20):
            bar = view.horizontalScrollBar() if i < 12 else view.verticalScrollBar()
            bar.setValue(bar.value() + (60 if bar.value() + 60 <= bar.maximum() else -60))
            pans.append(frame_ms(view))
        zooms = []
        for f in (1.1, 0.91) * 3:
            view.zoom(f)
            zooms.append(frame_ms(view))
        cables.settle()  # what its timer does once the zoom rests
        rest = until_sharp(view)
        single = {}
        for f in (1.1, 1 / 1.1):
            cables.settle()  # a pause: the next step is no part of a run
            view.zoom(f)
            single[f] = until_sharp(view)
        frames = pans + zooms + rest + single[1.1] + single[1 / 1.1]
        worst = max(worst, *frames)
        note(f"{what}: pan worst frame", max(pans))
        note(f"{what}: zoom {label.replace(' ', '')} worst frame", max(zooms + rest + single[1.1] + single[1 / 1.1]))
        note(f"{what}: jump to {label.replace(' ', '')} worst frame", max(arrive))
        note(f"{what}: longest wait until sharp", max(sum(f) for f in (arrive, rest, single[1.1], single[1 / 1.1])))
        note(f"{what}: most frames until sharp", max(len(f) for f in (arrive, rest, single[1.1], single[1 / 1.1])))
        print(f"{what}, zoom {label:>5} ({view.scale_factor() * 100:.0f} %): "
              f"pan median {statistics.median(pans):.1f} ms (max {max(pans):.1f}); "
              f"zoom run: step median {statistics.median(zooms):.1f} ms (max {max(zooms):.1f}), "
              f"once it rests {sharp_text(rest)}; one step after a pause, "
              f"in: {sharp_text(single[1.1])}, "
              f"out: {sharp_text(single[1 / 1.1])}; worst of all these frames {max(frames):.1f} ms "
              f"(arriving by a jump from the last zoom: {sharp_text(arrive)})")
    return worst


def report_drag(window, comp) -> float:
    """A drag at "zoom to fit" of ``comp``: 10 mouse moves of 40 scene units, each a frame (as the
    view does it: the item moved, its cables placed anew), then the release (the edit) and the
    frames once the edits stop (the cables folded back into the picture far out). Returns the
    worst frame."""
    view, scene = window.view, window.scene
    cables = scene.cables
    view.zoom_reset()
    view.zoom_to_fit()
    view.centerOn(scene.content_rect().center())
    cables.settle()
    until_sharp(view)
    item = scene.comp_items[comp.id]
    subtree = scene.subtree(comp.id)
    start = item.scenePos()
    moves, stood_in, batches, on_top = [], 0, cables.batches_drawn, cables.drawn_on_top
    for step in range(1, 11):
        item.setPos(start.x() + 40.0 * step, start.y())
        scene.refresh_links(subtree)
        moves.append(frame_ms(view))
        stood_in += cables.refining  # the picture from before the drag still showing
    per_move = (cables.drawn_on_top - on_top) / len(moves)
    batches = cables.batches_drawn - batches
    t = time.perf_counter()
    window.editor.move({comp.id: (item.scenePos().x(), item.scenePos().y())})
    t_edit = (time.perf_counter() - t) * 1000
    release = until_sharp(view)
    cables.fold()  # what its timer does once the edits stop
    scene.boxes.fold()  # and the box layer's: the moved boxes back into its picture
    folded = until_sharp(view)
    frames = moves + release + folded
    note("drag at fit: worst move frame", max(moves))
    note("drag at fit: worst frame after the release", max(release + folded))
    note("drag at fit: longest wait until sharp", max(sum(release), sum(folded)))
    print(f"drag of {comp.kind} {comp.id} ({len(window.editor.topo.links_of(comp.id))} cables of its own, "
          f"{per_move:.0f} drawn over the picture a move) at fit ({view.scale_factor() * 100:.0f} %): "
          f"10 moves, median {statistics.median(moves):.1f} ms, worst {max(moves):.1f} ms, "
          f"{batches} batches drawn into pictures during them, {stood_in} frames with the picture "
          f"from before the drag; the release: the edit {t_edit:.1f} ms, then {sharp_text(release)}; "
          f"once the edits stop {sharp_text(folded)}")
    return max(frames)


def main(servers: int = 2048) -> None:
    from PySide6.QtWidgets import QApplication

    from designer.gui.app import make_app
    from designer.gui.mainwindow import MainWindow
    from designer.topology import fileformat
    from designer.topology.catalog import load_catalog
    from designer.topology.templates import rail_optimized

    app = make_app()
    catalog = load_catalog()
    t = time.perf_counter()
    design = rail_optimized(servers=servers)
    print(f"template: {time.perf_counter() - t:.2f} s")
    topo = design.topology
    gpus = sum(int(catalog.resolve(s)["gpu_count"]) for s in topo.servers())
    print(f"{len(topo.servers())} servers, {gpus} GPUs, {len(topo.components)} components, "
          f"{len(topo.links)} links")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.json"
        fileformat.save(design, path)
        t = time.perf_counter()
        loaded = fileformat.load(path)
        t_load = time.perf_counter() - t
        window = MainWindow(loaded, str(path), catalog)
        window.resize(1600, 1000)
        painted = FirstPaint(window.view.viewport())
        window.show()
        while painted.at is None:
            QApplication.processEvents()
        t_open = painted.at - t
        while window.check_pending:  # the design is checked after the first paint
            QApplication.processEvents()
        t_checked = time.perf_counter() - t
    t = time.perf_counter()
    window.revalidate()  # the design check and the problems list again, on its own
    t_problems = time.perf_counter() - t
    print(f"open (load file {t_load:.2f} s + window, items, first paint of the canvas): {t_open:.2f} s; "
          f"problems listed at {t_checked:.2f} s; the check and the problems list on their own "
          f"{t_problems:.2f} s")
    note("open: first paint (s)", t_open)
    note("open: problems listed (s)", t_checked)
    note("problems list on its own (s)", t_problems)
    print(f"scene items: {len(window.scene.items())}")
    view = window.view
    minimap = view.minimap
    minimap.wanted = False
    minimap.place()
    worst = report_frames(window, "no overlay, no overview map")
    minimap.wanted = True
    view.zoom_reset()
    minimap.place()
    t = time.perf_counter()
    minimap.rebuild()
    t_map = (time.perf_counter() - t) * 1000
    print(f"overview map drawn (sharp) in {t_map:.1f} ms")
    note("overview map: drawn sharp (ms)", t_map)
    worst = max(worst, report_frames(window, "no overlay"))
    rng = random.Random(0)
    util = {lid: rng.random() for lid in topo.links}
    marked = set(rng.sample(sorted(topo.links), 20)) | {topo.servers()[0].id}
    t = time.perf_counter()
    window.scene.show_utilization(util, marked)
    frame_ms(view)
    print(f"utilization overlay on {len(util)} cables: {time.perf_counter() - t:.2f} s (with a frame)")
    worst = max(worst, report_frames(window, "overlay"))
    print(f"worst frame at a zoom reached (pans, zoom steps, refinement): {worst:.1f} ms")
    switch = next(c for c in topo.components.values() if c.kind == "switch" and c.pos is not None)
    rack = next(c for c in topo.components.values() if c.kind == "rack" and c.pos is not None)
    for comp in (switch, rack):
        worst = max(worst, report_drag(window, comp))
    print(f"worst frame of all (zooms, pans, drags at fit): {worst:.1f} ms")
    view.zoom_reset()
    view.centerOn(window.scene.comp_items[switch.id].scenePos())
    until_sharp(view)
    cables = window.scene.cables
    in_view, before = len(cables._tiles), cables.tiles_rendered
    t = time.perf_counter()
    window.editor.move({switch.id: (switch.pos[0] + 40.0, switch.pos[1])})
    t_move = (time.perf_counter() - t) * 1000
    edit = until_sharp(view)
    print(f"an edit (a switch and its {len(topo.links_of(switch.id))} cables moved) at "
          f"{view.scale_factor() * 100:.0f} % with the overlay: the move {t_move:.1f} ms, then "
          f"{sharp_text(edit)}; {cables.tiles_rendered - before} of {in_view} tiles drawn anew")
    note("edit at 100 %, overlay: worst frame", max(edit))
    window.editor.stack.clear()
    window.close()
    print("SUMMARY " + json.dumps(SUMMARY))


def repeat(runs: int, servers: int) -> None:
    """Run the bench ``runs`` times, each in a process of its own, and print each summary
    figure's median (and range) over the runs."""
    import subprocess

    got: dict[str, list[float]] = {}
    for n in range(runs):
        done = subprocess.run([sys.executable, __file__, str(servers)], capture_output=True, text=True,
                              env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
        line = next((l for l in done.stdout.splitlines() if l.startswith("SUMMARY ")), None)
        if line is None:
            print(f"run {n + 1}: no summary (exit {done.returncode}): {done.stderr.strip()[-300:]}")
            continue
        for key, value in json.loads(line[len("SUMMARY "):]).items():
            got.setdefault(key, []).append(value)
        print(f"run {n + 1} done", flush=True)
    for key, values in got.items():
        unit = "" if "(" in key or "frames until" in key else " ms"
        print(f"{key}: median {statistics.median(values):.2f}{unit} "
              f"(runs: {', '.join(f'{v:.2f}' for v in values)})")


def _cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def screenshot(servers: int = 20448, design: str | None = None) -> None:
    """Time the --screenshot of a large design: as a process, then by phase."""
    import resource
    import subprocess

    from designer.topology import fileformat

    folder = Path(tempfile.mkdtemp(prefix="bench-shot-"))
    path = Path(design) if design else folder / f"rail-{servers}.json"
    if not path.exists():
        bench_large = Path(__file__).with_name("bench_large.py")
        subprocess.run([sys.executable, str(bench_large), "--build", str(servers), str(path)], check=True)
    lifted = ("import sys; from designer.topology import fileformat as f; "
              "f.MAX_FILE_BYTES = 1 << 30; f.MAX_COMPONENTS = 10 ** 7; "
              "from designer.cli import main; sys.exit(main(sys.argv[1:]))")
    out = folder / "shot.png"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", lifted, str(path), "--screenshot", str(out)],
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen"}, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(f"screenshot process: exit {done.returncode}, wall {wall:.1f} s, CPU {cpu:.1f} s, peak "
          f"{after.ru_maxrss / 1024:.0f} MiB (target < 30 s: {'met' if wall < 30 else 'MISSED'})"
          + (f" [{done.stderr.strip().splitlines()[-1]}]" if done.returncode else ""))
    # the same steps in this process, by phase (CPU seconds)
    from PySide6.QtWidgets import QApplication

    from designer.gui.app import SCREENSHOT_CHECK_MAX, make_app
    from designer.gui.mainwindow import MainWindow

    fileformat.MAX_FILE_BYTES, fileformat.MAX_COMPONENTS = 1 << 30, 10 ** 7
    app = make_app()
    phases = {}
    t = _cpu()
    loaded = fileformat.load(path)
    phases["load"] = _cpu() - t
    t = _cpu()
    window = MainWindow(loaded, str(path))
    window.resize(1600, 1000)
    phases["window and scene"] = _cpu() - t
    t = _cpu()
    checked = len(loaded.topology.components) <= SCREENSHOT_CHECK_MAX  # as app.run_gui does
    if not checked:
        window.leave_unchecked("not checked")
    window.show()
    while window.check_pending:
        app.processEvents()
    app.processEvents()
    phases["first paint" + (", design check, run view" if checked else "")] = _cpu() - t
    t = _cpu()
    QApplication.processEvents()
    window.view.zoom_to_fit()
    window.grab().save(str(out), "PNG")
    phases["fit and grab"] = _cpu() - t
    n = len(loaded.topology.components)
    print(f"{n:,} components, {len(loaded.topology.links):,} cables; by phase (CPU s): "
          + ", ".join(f"{k} {v:.1f}" for k, v in phases.items()))
    window.autosaver.discard()
    window.close()
    if not design:
        for p in folder.iterdir():
            p.unlink()
        folder.rmdir()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--screenshot"]:
        rest = sys.argv[2:]
        design = rest[rest.index("--design") + 1] if "--design" in rest else None
        numbers = [a for a in rest if a.isdigit()]
        screenshot(int(numbers[0]) if numbers else 20448, design)
    elif sys.argv[1:2] == ["--repeat"]:
        rest = [a for a in sys.argv[2:] if a.isdigit()]
        repeat(int(rest[0]) if rest else 3, int(rest[1]) if len(rest) > 1 else 2048)
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 2048)
