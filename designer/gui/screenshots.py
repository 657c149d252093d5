"""Retake the window screenshots of the documentation:

    python -m designer.gui.screenshots [OUT_DIR] [--size 1600x1000]

writes ``main-example.png`` (the example design), ``main-256.png`` (a 256-server rail-optimized
design), ``main-run.png`` (the example after a run, a switch selected), ``run-view.png`` (the run
view alone) and ``engine-results.png`` (its Engine results tab) into OUT_DIR (default ``resources/screenshots``). Rendered offscreen.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from designer.paths import resources_dir

#: the switch selected in main-run.png (its cables' figures fill "Run figures")
RUN_SELECTION = "sw-1"
RUN_TIMEOUT_S = 120


def _window(design, path, size):
    from designer.gui.mainwindow import MainWindow

    window = MainWindow(design, path)
    window.resize(*size)
    return window


def _settle(app, seconds: float = 0.3) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()


def _run(app, window) -> None:
    window.run()
    end = time.monotonic() + RUN_TIMEOUT_S
    while window.run_view.is_running():
        if time.monotonic() > end:
            raise TimeoutError(f"the run did not end within {RUN_TIMEOUT_S} s")
        app.processEvents()
        time.sleep(0.01)
    _settle(app)


def take(out_dir: Path, size: tuple[int, int]) -> list[Path]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from designer.services.workloads import DEFAULT_WORKLOAD, fitted_workload
    from designer.gui.app import make_app, render_png
    from designer.topology import fileformat
    from designer.topology.templates import rail_optimized

    app = make_app()
    example = resources_dir() / "examples" / "example.json"
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []

    def shoot(window, name: str) -> None:
        _settle(app)
        render_png(window, out_dir / name)
        written.append(out_dir / name)

    window = _window(fileformat.load(example), str(example), size)
    shoot(window, "main-example.png")
    _run(app, window)
    window.scene.select_ids([RUN_SELECTION])
    window.view.zoom_to_fit()
    shoot(window, "main-run.png")
    run_view = window.run_view
    run_view.setParent(None)  # alone, as wide as the window and a little under half its height
    run_view.resize(size[0], int(0.62 * size[1]))
    run_view.show()
    _settle(app)
    run_view.grab().save(str(out_dir / "run-view.png"), "PNG")
    written.append(out_dir / "run-view.png")
    run_view.tabs.setCurrentWidget(run_view.engine)
    _settle(app)
    run_view.grab().save(str(out_dir / "engine-results.png"), "PNG")
    written.append(out_dir / "engine-results.png")
    run_view.close()
    window.autosaver.discard()
    window.close()

    design = rail_optimized(servers=256, dpu="bluefield-3")  # as `dpu-designer new` makes it
    design.workload = fitted_workload(DEFAULT_WORKLOAD, design, window.catalog)
    window = _window(design, None, size)
    shoot(window, "main-256.png")
    window.autosaver.discard()
    window.close()
    return written


def main(argv: list[str] | None = None) -> int:
    from designer.gui.app import _size

    parser = argparse.ArgumentParser(prog="python -m designer.gui.screenshots", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", nargs="?", default=str(resources_dir() / "screenshots"))
    parser.add_argument("--size", default="1600x1000", help="window size (WxH)")
    args = parser.parse_args(argv)
    for path in take(Path(args.out_dir), _size(args.size)):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
