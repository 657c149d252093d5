"""The designer window: palette | canvas | inspector, workload/scenario and problems docks, menus,
toolbar, status bar, files (new from template, open, save, recent, autosave and recovery).

Another part of the program can add a live run view with :meth:`MainWindow.add_run_view`; if the
module ``designer.gui.runview`` exists and defines ``make_run_view(window) -> QWidget``, the window
docks its result as "Run" once the canvas has been painted (the run view pulls in the engine and
scipy, ~1 s, so it is imported after the window is on screen, or when Run is first asked for). The
design is checked (problems list) at that point too, and after every change. The run view follows
the current document, colours the canvas with its results (``DesignScene.show_utilization``) and
shows the run's figures of the canvas selection ("Run figures", tabbed with the workload panel and
raised when a run has results); Run → Sweep opens :mod:`designer.gui.sweepdialog`.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

from PySide6.QtCore import QEvent, QMimeData, QSettings, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QApplication, QDockWidget, QFileDialog, QLabel, QMainWindow,
                               QMessageBox, QStyle)

from designer.errors import UsageError
from designer.gui import recovery
from designer.gui.editor import CLIPBOARD_MIME, Editor, RefusedEdit
from designer.gui.icons import app_icon
from designer.gui.inspector import Inspector
from designer.gui.messages import gui_words
from designer.gui.palette import Palette
from designer.gui.problems import ProblemsList
from designer.gui.scenario import ScenarioPanel
from designer.gui.scene import DesignScene
from designer.gui.view import CanvasView
from designer.paths import resources_dir, user_config_dir
from designer.report.actions import install_export_menu
from designer.topology import fileformat
from designer.topology.catalog import load_catalog
from designer.topology.design import Design
from designer.topology.validation import validate

APP_NAME = "DPU Cluster Designer"
FILE_FILTER = "Cluster designs (*.json);;All files (*)"
MAX_RECENT = 8
#: share of the window height the run dock gets when a run starts
RUN_DOCK_SHARE = 0.5
#: most of the window's height the run dock takes to show its plots without scrolling (the canvas
#: keeps the rest: at the default 1500x950 window that is ~380 px of canvas)
RUN_DOCK_MAX = 0.62
#: starting widths of the palette and of the right-hand docks, height of the bottom docks (px)
PALETTE_WIDTH, SIDE_WIDTH, BOTTOM_HEIGHT = 300, 420, 130


def example_path() -> Path:
    return resources_dir() / "examples" / "example.json"


def settings() -> QSettings:
    return QSettings(str(user_config_dir() / "gui.ini"), QSettings.IniFormat)


_clipboard_hook = False


def _release_clipboard_at_exit() -> None:
    """Give the clipboard's data back before the interpreter tears down: a process that copied
    components segfaulted as it exited (the clipboard's QMimeData freed twice, once with the
    QApplication and once with its Python wrapper; seen on every copy-then-quit, offscreen and
    with tests). The text stays on the system clipboard where a clipboard manager keeps it."""
    global _clipboard_hook
    if _clipboard_hook:
        return
    import atexit

    def release() -> None:
        app = QApplication.instance()
        if app is not None:
            clip = app.clipboard()
            data = clip.mimeData()
            if data is not None and data.hasFormat(CLIPBOARD_MIME):
                clip.clear()

    atexit.register(release)
    _clipboard_hook = True


class MainWindow(QMainWindow):
    def __init__(self, design: Design | None = None, path: str | None = None, catalog=None) -> None:
        super().__init__()
        self.catalog = catalog or load_catalog()
        self.path: str | None = None
        design = design or Design()
        self.editor = Editor(design, self.catalog, self)
        self.scene = DesignScene(self.catalog, self, lazy_badges=True)
        self.view = CanvasView(self.scene, self.editor, self)
        self.setCentralWidget(self.view)
        self.setWindowIcon(app_icon())
        self.autosaver = recovery.Autosaver()
        self._autosaved_version = -1
        self._shut = False  #: shut down (closed, or quit keeping the work): nothing more to ask

        self.palette = Palette(self.catalog)
        self.inspector = Inspector(self.editor)
        self.scenario = ScenarioPanel(self.editor)
        self.problems = ProblemsList()
        self.docks: dict[str, QDockWidget] = {}
        self._dock("Components", self.palette, Qt.LeftDockWidgetArea)
        self._dock("Properties", self.inspector, Qt.RightDockWidgetArea)
        self._dock("Workload and scenario", self.scenario, Qt.RightDockWidgetArea)
        self._dock("Problems", self.problems, Qt.BottomDockWidgetArea)
        self.setCorner(Qt.BottomRightCorner, Qt.RightDockWidgetArea)  # inspector: full height
        self._docks_sized = False
        self.check_pending = False  # a new document is checked once the window is on screen

        self._status = QLabel()
        self._counts = QLabel()
        self._zoom = QLabel()
        self.statusBar().addWidget(self._status, 1)
        self.statusBar().addPermanentWidget(self._counts)
        self.statusBar().addPermanentWidget(self._zoom)

        self._validate_timer = QTimer(self, singleShot=True, interval=300)
        self._validate_timer.timeout.connect(self.revalidate)
        self._refresh_timer = QTimer(self, singleShot=True, interval=0)
        self._refresh_timer.timeout.connect(self._refresh_panels)
        self._autosave_timer = QTimer(self, interval=int(float(os.environ.get(
            "DPU_DESIGNER_AUTOSAVE_S", "30")) * 1000))
        self._autosave_timer.timeout.connect(self.autosave)
        self._autosave_timer.start()

        self._make_actions()
        self.editor.refused.connect(self._refused)
        self.editor.stack.cleanChanged.connect(self._update_title)
        self.editor.stack.indexChanged.connect(self._update_title)
        self.view.message.connect(self.show_message)
        self.view.zoomed.connect(self._show_zoom)
        self.scene.selectionChanged.connect(self._selection_changed)
        self.problems.goto.connect(self.goto)
        self.palette.activated.connect(self._place_from_palette)
        from designer.gui.canvas_menu import CanvasMenu

        self.canvas_menu = CanvasMenu(self)
        self._context_point = None  #: scene point of the last canvas right click (Paste here)
        self.find_dialog = None
        self.resize(1500, 950)
        self.run_view = None
        self.sweep_dialog = None
        self.set_document(design, path)

    # ------------------------------------------------------------- building
    def _dock(self, title: str, widget, area) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(title)
        dock.setWidget(widget)
        dock.setFeatures(QDockWidget.DockWidgetMovable | QDockWidget.DockWidgetClosable
                         | QDockWidget.DockWidgetFloatable)
        self.addDockWidget(area, dock)
        self.docks[title] = dock
        return dock

    def showEvent(self, event) -> None:  # noqa: N802
        super().showEvent(event)
        if not self._docks_sized:  # dock sizes only stick once the window has its size
            self._docks_sized = True
            self._size_docks()
            self.view.viewport().installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802
        """After the canvas's first paint: check the design, then dock the run view (an opened
        design is on screen before these ~1-2 s on a 2,048-server design)."""
        if event.type() == QEvent.Paint and watched is self.view.viewport():
            watched.removeEventFilter(self)
            QTimer.singleShot(0, self, self._after_first_paint)
        return False

    def leave_unchecked(self, note: str) -> None:
        """Show the design without checking it or docking the run view after the first paint
        (``--screenshot`` of a design too large to check in a moment); ``note`` says so in the
        problems list."""
        self.check_pending = False
        self._unchecked = True
        self.problems.set_problems([], note)
        self.docks["Problems"].setWindowTitle("Problems (not checked)")

    _unchecked = False

    def first_paint_work_now(self) -> None:
        """Do now what the canvas's first paint would start (check the design, dock the run
        view): a window rendered offscreen without being put on screen (``--screenshot``) is
        painted only by the grab, which must already show both."""
        self.view.viewport().removeEventFilter(self)
        self._after_first_paint()

    def _after_first_paint(self) -> None:
        if self._unchecked:
            return
        if self.check_pending:
            self.revalidate()
        if self.load_run_view() is not None:
            self._size_docks()  # the run dock is tabbed with the problems: keep them low

    def _size_docks(self) -> None:
        self.resizeDocks([self.docks["Components"], self.docks["Properties"]],
                         [PALETTE_WIDTH, SIDE_WIDTH], Qt.Horizontal)
        settings = self.docks["Workload and scenario"]
        low = min(settings.sizeHint().height(), int(0.6 * self.height()))
        self.resizeDocks([self.docks["Properties"], settings], [self.height() - low, low],
                         Qt.Vertical)
        self.resizeDocks([self.docks["Problems"]], [BOTTOM_HEIGHT], Qt.Vertical)

    def add_run_view(self, widget, title: str = "Run") -> QDockWidget:
        """Dock a run/plots view under the canvas (tabbed with the problems list)."""
        dock = self._dock(title, widget, Qt.BottomDockWidgetArea)
        self.tabifyDockWidget(self.docks["Problems"], dock)
        self.view_menu.addAction(dock.toggleViewAction())
        return dock

    def load_run_view(self):
        """Dock the run view (once); None if this installation has none."""
        if self.run_view is not None:
            return self.run_view
        try:
            module = importlib.import_module("designer.gui.runview")
        except ModuleNotFoundError as exc:
            if exc.name != "designer.gui.runview":
                raise
            return None
        if not hasattr(module, "make_run_view"):
            return None
        view = module.make_run_view(self)
        self.run_view = view
        self.add_run_view(view)
        if hasattr(view, "overlay_changed"):
            view.overlay_changed.connect(self.show_utilization)
        if hasattr(view, "figures_panel"):  # the run's figures of the selection, under the inspector
            dock = self._dock("Run figures", view.figures_panel, Qt.RightDockWidgetArea)
            self.tabifyDockWidget(self.docks["Workload and scenario"], dock)
            self.docks["Workload and scenario"].raise_()
            self.view_menu.addAction(dock.toggleViewAction())
            if hasattr(view, "result_ready"):  # a run's figures are what the user looks at next
                view.result_ready.connect(lambda *_: dock.raise_())
        return view

    def _action(self, menu, text: str, slot, shortcut=None, tip: str = "", canvas_only=False,
                checkable=False) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        if canvas_only:  # keys that text fields need for themselves only act on the canvas
            action.setShortcutContext(Qt.WidgetWithChildrenShortcut)
            self.view.addAction(action)
        action.setStatusTip(tip or text.replace("&", "").replace("…", ""))
        action.setCheckable(checkable)
        action.triggered.connect(slot)
        menu.addAction(action)
        return action

    def _make_actions(self) -> None:
        bar = self.menuBar()
        f = bar.addMenu("&File")
        a = {}
        a["new"] = self._action(f, "&New", self.new_design, QKeySequence.New)
        a["template"] = self._action(f, "New from &template…", self.new_from_template, "Ctrl+Shift+N")
        a["open"] = self._action(f, "&Open…", self.open_dialog, QKeySequence.Open)
        self.recent_menu = f.addMenu("Open &recent")
        a["save"] = self._action(f, "&Save", self.save, QKeySequence.Save)
        a["saveas"] = self._action(f, "Save &as…", self.save_as_dialog, QKeySequence.SaveAs)
        f.addSeparator()
        self.export_menu = install_export_menu(self, f)
        f.addSeparator()
        self._action(f, "&Quit", self.close, QKeySequence.Quit)
        e = bar.addMenu("&Edit")
        a["undo"] = self.editor.stack.createUndoAction(self, "&Undo")
        a["undo"].setShortcut(QKeySequence.Undo)
        a["redo"] = self.editor.stack.createRedoAction(self, "&Redo")
        # Ctrl+Y and Ctrl+Shift+Z both redo, whatever the platform's standard key is
        a["redo"].setShortcuts(list(dict.fromkeys(
            [*QKeySequence.keyBindings(QKeySequence.Redo), QKeySequence("Ctrl+Y"),
             QKeySequence("Ctrl+Shift+Z")])))
        e.addActions([a["undo"], a["redo"]])
        e.addSeparator()
        a["cut"] = self._action(e, "Cu&t", self.cut, QKeySequence.Cut, canvas_only=True)
        a["copy"] = self._action(e, "&Copy", self.copy, QKeySequence.Copy, canvas_only=True)
        a["paste"] = self._action(e, "&Paste", self.paste, QKeySequence.Paste, canvas_only=True)
        a["duplicate"] = self._action(e, "D&uplicate", self.duplicate, "Ctrl+D", canvas_only=True)
        a["delete"] = self._action(e, "&Delete", self.delete_selection, QKeySequence.Delete,
                                   canvas_only=True)
        a["select_all"] = self._action(e, "Select &all", self.select_all, QKeySequence.SelectAll,
                                       canvas_only=True)
        e.addSeparator()
        a["find"] = self._action(e, "&Find…", self.find, QKeySequence.Find,
                                 "Find a component or link by id or name, bring it into view and "
                                 "select it")
        # context-menu entries (designer.gui.canvas_menu), also in the Edit menu
        a["paste_here"] = self._action(e, "Paste &here", self.paste_here, None,
                                       "Paste where the canvas was right-clicked")
        a["inspect"] = self._action(e, "&Inspect", self.inspect, None,
                                    "Show the selection's figures in the Properties panel")
        v = bar.addMenu("&View")
        self.view_menu = v
        a["zoom_in"] = self._action(v, "Zoom &in", lambda: self.view.zoom(1.25), QKeySequence.ZoomIn)
        a["zoom_out"] = self._action(v, "Zoom &out", lambda: self.view.zoom(0.8), QKeySequence.ZoomOut)
        a["fit"] = self._action(v, "Zoom to &fit", self.view.zoom_to_fit, "Ctrl+0")
        a["actual"] = self._action(v, "&Actual size", self.view.zoom_reset, "Ctrl+1")
        a["minimap"] = self._action(v, "&Overview map", self.view.minimap.set_wanted, None,
                                    "Show the whole design small in the canvas's corner; click it "
                                    "to move there", checkable=True)
        a["minimap"].setChecked(True)
        a["overlay_peak"] = self._action(v, "Cable colours: &busiest phase", self._overlay_peak, None,
                                         "Colour the cables by the utilization of their busiest "
                                         "phase instead of the utilization averaged over the "
                                         "iteration (after a Run)", checkable=True)
        if hasattr(self.scene, "overlay_changed"):
            self.scene.overlay_changed.connect(self._sync_overlay_action)
        a["elevation"] = self._action(v, "&Rack elevation…", self.open_elevation, None,
                                      "Each rack's U positions with its servers, switches and "
                                      "storage; export as PNG/SVG or print")
        v.addSeparator()
        for dock in self.docks.values():
            v.addAction(dock.toggleViewAction())
        d = bar.addMenu("&Design")
        a["connect"] = self._action(d, "&Connect mode", self.view.set_connect_mode, "C",
                                    "Drag from one item to another to lay a cable (Esc leaves)",
                                    canvas_only=True, checkable=True)
        self.view.connect_mode_changed.connect(a["connect"].setChecked)  # Esc leaves it: unlit
        a["layout"] = self._action(d, "Auto-&layout by tier", self.auto_layout, "Ctrl+Shift+L")
        a["validate"] = self._action(d, "&Check design", self.revalidate, "F7")
        r = bar.addMenu("&Run")
        a["run"] = self._action(r, "&Run", self.run, "F5",
                                "Run the engine and the training timeline, host-managed and "
                                "DPU-offloaded")
        a["cancel_run"] = self._action(r, "&Cancel run", self.cancel_run, "Shift+F5")
        a["sweep"] = self._action(r, "&Sweep…", self.open_sweep, "Ctrl+F5",
                                  "Run the design over values of one parameter")
        a["plan"] = self._action(r, "&Plan layout…", self.open_plan, None,
                                 "Search the fastest parallel layout of the workload that fits in "
                                 "GPU memory")
        a["optimize"] = self._action(r, "&Optimize…", self.open_optimize, None,
                                     "Search server models, adapters, switches and oversubscription for a "
                                     "target: the Pareto front of cost, training time and energy")
        h = bar.addMenu("&Help")
        self._action(h, "&About", self.about)
        self.actions_by_name = a

        style = self.style()
        icons = {"new": QStyle.SP_FileIcon, "open": QStyle.SP_DialogOpenButton,
                 "save": QStyle.SP_DialogSaveButton, "undo": QStyle.SP_ArrowBack,
                 "redo": QStyle.SP_ArrowForward, "delete": QStyle.SP_TrashIcon,
                 "fit": QStyle.SP_TitleBarMaxButton, "layout": QStyle.SP_FileDialogListView,
                 "connect": QStyle.SP_CommandLink, "run": QStyle.SP_MediaPlay,
                 "cancel_run": QStyle.SP_MediaStop, "sweep": QStyle.SP_MediaSeekForward}
        for name, icon in icons.items():
            a[name].setIcon(style.standardIcon(icon))
        tb = self.addToolBar("Main")
        tb.setObjectName("main-toolbar")
        tb.setToolButtonStyle(Qt.ToolButtonTextBesideIcon)
        for name in ("new", "open", "save", None, "undo", "redo", None, "connect", "layout", "fit",
                     None, "delete", None, "run", "sweep"):
            if name is None:
                tb.addSeparator()
            else:
                tb.addAction(a[name])
        self._rebuild_recent()

    # ------------------------------------------------------------- document
    def set_document(self, design: Design, path: str | None) -> None:
        """Show ``design`` (from ``path``, or new); the undo history starts empty."""
        old = self.editor.design
        old.unsubscribe(self._model_changed)
        self.editor.design = design
        self.editor.stack.clear()
        self.path = str(path) if path else None
        self.scene.set_design(design)
        design.subscribe(self._model_changed)
        if self.run_view is not None:
            self.run_view.set_design(design, self.catalog)
        if self.sweep_dialog is not None:
            self.sweep_dialog.set_design(design)
        self.inspector.show_ids([])
        self.scenario.refresh()
        self._update_title()
        self._status.setText(f"Opened {Path(path).name}" if path else "")  # not the last document's news
        self.problems.set_problems([], "Checking the design…")
        self.docks["Problems"].setWindowTitle("Problems (checking…)")
        self.check_pending = True
        if self._docks_sized:  # else it is checked after the first paint
            QTimer.singleShot(0, self, self.revalidate)
        self.view.fit_design()  # and again once the window has its real size
        self._update_counts()

    @property
    def design(self) -> Design:
        return self.editor.design

    def is_modified(self) -> bool:
        return not self.editor.stack.isClean()

    def _model_changed(self, event) -> None:
        self.view.minimap.schedule()
        self._validate_timer.start()
        self._refresh_timer.start()

    def _refresh_panels(self) -> None:
        self.inspector.refresh()
        self.scenario.refresh()
        self._update_counts()

    def _update_title(self, *_args) -> None:
        name = Path(self.path).name if self.path else "untitled"
        self.setWindowTitle(f"{self.design.name} ({name})[*] — {APP_NAME}")
        self.setWindowModified(self.is_modified())

    def _update_counts(self) -> None:
        topo = self.design.topology
        gpus = 0
        per_model: dict[tuple[str, str], int] = {}  # servers without overrides: once per model
        for s in topo.servers():
            key = (s.kind, s.model)
            count = None if s.props else per_model.get(key)
            if count is None:
                try:
                    count = int(self.catalog.resolve(s).get("gpu_count", 0))
                except KeyError:
                    count = 0
                if not s.props:
                    per_model[key] = count
            gpus += count
        from designer.services.cabling import counts_text
        from designer.topology.management import switches_text

        self._counts.setText(f"{len(topo.servers()):,} servers · {gpus:,} GPUs · "
                             f"{switches_text(topo)} · {counts_text(topo)}")

    def revalidate(self) -> None:
        self.check_pending = False
        problems = validate(self.design, self.catalog)
        self.scene.set_problems(problems)
        self.problems.set_problems(problems)
        errors, warnings = self.problems.counts()
        self.docks["Problems"].setWindowTitle(f"Problems ({errors} errors, {warnings} warnings)")

    def _show_zoom(self, scale: float) -> None:
        self._zoom.setText(f"{scale * 100:.0f} %")

    def _refused(self, reason: str) -> None:
        self.show_message(f"Not done: {reason}")

    def show_message(self, text: str) -> None:
        self._status.setText(text)

    def _selection_changed(self) -> None:
        ids = self.scene.selected_ids()
        self.inspector.show_ids(ids)
        if self.run_view is not None:
            self.run_view.show_figures(ids, self.design.topology)

    def goto(self, ident: str) -> None:
        """Bring a component or cable into view and select it (in that order: a NIC/DPU badge is
        hidden, so not selectable, until the zoom shows badges)."""
        self.view.center_on_id(ident)
        self.scene.select_ids([ident])

    # --------------------------------------------------------------- files
    def maybe_save(self) -> bool:
        """Ask about unsaved changes; False means the user cancelled."""
        if not self.is_modified():
            return True
        answer = QMessageBox.question(
            self, APP_NAME, f"Save the changes to {self.design.name}?",
            QMessageBox.Save | QMessageBox.Discard | QMessageBox.Cancel, QMessageBox.Save)
        if answer == QMessageBox.Save:
            return self.save()
        return answer == QMessageBox.Discard

    def new_design(self) -> None:
        if self.maybe_save():
            self.autosaver.discard()
            self.set_document(Design(), None)

    def new_from_template(self) -> None:
        from designer.gui.template_dialog import TemplateDialog
        from designer.topology.templates import TEMPLATES

        if not self.maybe_save():
            return
        dialog = TemplateDialog(self.catalog, self, settings=settings())
        if dialog.exec() != TemplateDialog.Accepted:
            return
        dialog.remember()
        name, options = dialog.choice()
        QApplication.setOverrideCursor(Qt.WaitCursor)
        try:
            design = TEMPLATES[name](**options)
            if not design.workload:  # runnable as it is: the workload `dpu-designer new` gives
                design.workload = self.runnable_workload(design)
        except (UsageError, ValueError, KeyError) as exc:
            QMessageBox.warning(self, APP_NAME, f"Cannot build the design: {gui_words(str(exc))}")
            return
        finally:
            QApplication.restoreOverrideCursor()
        self.autosaver.discard()
        self.set_document(design, None)

    def runnable_workload(self, design: Design) -> dict:
        """The workload ``dpu-designer new`` gives a design (the model its template suggests,
        its batch fitted to the design's GPUs); {} when that model cannot run on it (e.g. no GPU
        servers)."""
        from designer.services.workloads import fitted_workload
        from designer.topology.templates import suggested_workload

        try:
            return fitted_workload(suggested_workload(design), design, self.catalog)
        except UsageError:
            return {}

    def open_dialog(self) -> None:
        if not self.maybe_save():
            return
        start = str(Path(self.path).parent) if self.path else str(Path.home())
        path, _ = QFileDialog.getOpenFileName(self, "Open design", start, FILE_FILTER)
        if path:
            self.open_file(path)

    def open_file(self, path: str) -> bool:
        try:
            design = fileformat.load(path)
        except UsageError as exc:
            QMessageBox.critical(self, APP_NAME, str(exc))
            return False
        self.autosaver.discard()
        self.set_document(design, path)
        self._add_recent(path)
        return True

    def save(self) -> bool:
        if not self.path:
            return self.save_as_dialog()
        return self.save_to(self.path)

    def save_as_dialog(self) -> bool:
        start = self.path or str(Path.home() / f"{self.design.name}.json")
        path, _ = QFileDialog.getSaveFileName(self, "Save design as", start, FILE_FILTER)
        return self.save_to(path) if path else False

    def save_to(self, path: str) -> bool:
        try:
            fileformat.save(self.design, path)
        except (UsageError, OSError) as exc:
            QMessageBox.critical(self, APP_NAME, f"Cannot save {path}: {exc}")
            return False
        self.path = str(path)
        self.editor.stack.setClean()
        self.autosaver.discard()
        self._add_recent(self.path)
        self._update_title()
        self.show_message(f"Saved {path}")
        return True

    def recent_files(self) -> list[str]:
        value = settings().value("recent", [])
        return [value] if isinstance(value, str) else list(value or [])

    def _add_recent(self, path: str) -> None:
        path = str(Path(path).resolve())
        files = [path] + [p for p in self.recent_files() if p != path]
        settings().setValue("recent", files[:MAX_RECENT])
        self._rebuild_recent()

    def _rebuild_recent(self) -> None:
        self.recent_menu.clear()
        files = [p for p in self.recent_files() if Path(p).is_file()]
        for i, path in enumerate(files, 1):
            act = self.recent_menu.addAction(f"&{i} {Path(path).name}",
                                             lambda p=path: self.maybe_save() and self.open_file(p))
            act.setStatusTip(path)
        self.recent_menu.setEnabled(bool(files))

    # ------------------------------------------------------------ recovery
    def autosave(self) -> None:
        """Write the recovery file if there are changes not yet in it."""
        if not self.is_modified():
            self.autosaver.discard()
            return
        if self.design.topology.version != self._autosaved_version:
            problem = self.autosaver.write(self.design, self.path)
            if problem:  # tried again at the next tick
                self.show_message(f"Autosave failed: {problem}")
            else:
                self._autosaved_version = self.design.topology.version

    def offer_recovery(self) -> bool:
        """If a crashed session left a recovery file, offer to restore it. True if restored."""
        for file in recovery.leftovers():
            try:
                found = recovery.read(file)
            except UsageError:
                file.unlink(missing_ok=True)
                continue
            where = found.original or "an unsaved design"
            answer = QMessageBox.question(
                self, APP_NAME, f"The designer stopped without saving changes to {where} "
                f"({found.design.name}). Restore them?", QMessageBox.Yes | QMessageBox.No,
                QMessageBox.Yes)
            if answer != QMessageBox.Yes:
                file.unlink(missing_ok=True)
                continue
            self.set_document(found.design, found.original)
            self.editor.stack.resetClean()  # restored changes are not saved yet
            self._update_title()
            file.unlink(missing_ok=True)
            self.autosave()
            return True
        return False

    def closeEvent(self, event) -> None:  # noqa: N802
        if self._shut:  # quit_keeping_work ran: the changes are in the recovery file
            event.accept()
            return
        if self.maybe_save():
            self.autosaver.discard()
            self._shut_down()
            event.accept()
        else:
            event.ignore()

    def _shut_down(self) -> None:
        """Stop the timers, any run or sweep (their threads are waited for) and model following."""
        self._shut = True
        self._autosave_timer.stop()
        self.cancel_run(wait=True)
        if self.sweep_dialog is not None:
            self.sweep_dialog.close()
        if getattr(self, "plan_dialog", None) is not None:
            self.plan_dialog.close()
        if getattr(self, "optimize_dialog", None) is not None:
            self.optimize_dialog.close()
        self.design.unsubscribe(self._model_changed)
        self.scene.detach()

    def quit_keeping_work(self) -> None:
        """Close without asking (the process was told to stop: Ctrl+C, SIGTERM). Unsaved changes
        go to the recovery file, which the next start offers to restore; nothing is lost."""
        if self.is_modified():
            problem = self.autosaver.write(self.design, self.path)
            if problem:
                print(f"warning: unsaved changes could not be kept: {problem}", file=sys.stderr)
        else:
            self.autosaver.discard()
        self._shut_down()
        self.hide()

    # --------------------------------------------------------------- edits
    def _place_from_palette(self, payload: dict) -> None:
        center = self.view.mapToScene(self.view.viewport().rect().center())
        self.view.drop_component(payload, center)

    def selected(self) -> list[str]:
        return self.scene.selected_ids()

    def delete_selection(self) -> None:
        """Delete the selection. A rack with members that are not selected themselves asks first:
        delete them with it (the default, as draw.io and KiCad delete a container's contents),
        keep them on the canvas outside any rack, or cancel."""
        ids = self.selected()
        if not ids:
            return
        topo = self.design.topology
        chosen = set(ids)
        racks = [cid for cid in ids if cid in topo.components and topo.components[cid].kind == "rack"]
        members = [m for r in racks for m in topo.members(r) if m.id not in chosen]
        contents = True
        if members:
            answer = self.ask_rack_contents([topo.components[r].label for r in racks], len(members))
            if answer is None:
                return
            contents = answer == "delete"
        keep_at = {}
        if not contents:
            for m in members:
                p = self.scene.comp_items[m.id].scenePos()
                keep_at[m.id] = (p.x(), p.y())
        before = len(topo.components) + len(topo.links)
        self.editor.delete(ids, keep_at, contents=contents)
        gone = before - len(topo.components) - len(topo.links)
        self.show_message(f"Deleted {gone:,} item(s)" + ("" if contents or not members else
                                                          f"; {len(members):,} kept outside any rack"))

    def ask_rack_contents(self, racks: list[str], members: int) -> str | None:
        """Ask what deleting ``racks`` does with their ``members`` other components: "delete"
        (the default button), "keep" (outside any rack) or None (cancel)."""
        names = ", ".join(racks[:3]) + (" …" if len(racks) > 3 else "")
        box = QMessageBox(QMessageBox.Question, APP_NAME,
                          f"Delete {names} and the {members:,} component(s) in "
                          f"{'it' if len(racks) == 1 else 'them'}?", parent=self)
        box.setInformativeText("Keep the contents to leave them on the canvas outside any rack.")
        with_contents = box.addButton("Delete with contents", QMessageBox.DestructiveRole)
        keep = box.addButton("Keep the contents", QMessageBox.ActionRole)
        box.addButton(QMessageBox.Cancel)
        box.setDefaultButton(with_contents)
        box.exec()
        return {with_contents: "delete", keep: "keep"}.get(box.clickedButton())

    def paste_target(self) -> tuple[float, float]:
        """Where a paste lands (scene units): at the mouse pointer when it is over the canvas,
        else at the middle of the visible canvas; a paste again at the same place moves down and
        right by two grid steps each time, so copies never land on one another."""
        from PySide6.QtGui import QCursor

        from designer.gui.editor import GRID

        port = self.view.viewport()
        at = port.mapFromGlobal(QCursor.pos())
        if not port.rect().contains(at):
            at = port.rect().center()
        p = self.view.mapToScene(at)
        target = (round(p.x() / GRID) * GRID, round(p.y() / GRID) * GRID)
        last, repeats = getattr(self, "_last_paste", (None, 0))
        repeats = repeats + 1 if last == target else 0
        self._last_paste = (target, repeats)
        return target[0] + 2 * GRID * repeats, target[1] + 2 * GRID * repeats

    def paste_here(self) -> None:
        """Paste at the point of the last right click on the canvas (else as Paste does)."""
        self._paste(self._context_target())

    def _context_target(self) -> tuple[float, float] | None:
        from designer.gui.editor import GRID

        p = self._context_point
        return None if p is None else (round(p.x() / GRID) * GRID, round(p.y() / GRID) * GRID)

    def inspect(self) -> None:
        dock = self.docks.get("Properties")
        if dock is not None:
            dock.show()
            dock.raise_()
        self.inspector.show_ids(self.selected())

    def find(self) -> None:
        """Edit → Find (Ctrl+F): :class:`designer.gui.canvas_menu.FindDialog`."""
        from designer.gui.canvas_menu import FindDialog

        if self.find_dialog is None:
            self.find_dialog = FindDialog(self)
        self.find_dialog.show()
        self.find_dialog.raise_()
        self.find_dialog.text.setFocus()
        self.find_dialog.text.selectAll()

    def copy(self) -> None:
        ids = self.selected()
        if not ids:
            return
        data = QMimeData()
        text = self.editor.copy_data(ids)
        data.setData(CLIPBOARD_MIME, text.encode())
        data.setText(text)
        QApplication.clipboard().setMimeData(data)
        _release_clipboard_at_exit()
        self.show_message(f"Copied {len(ids)} item(s)")

    def cut(self) -> None:
        self.copy()
        self.delete_selection()

    def paste(self) -> None:
        self._paste(None)

    def _paste(self, at: tuple[float, float] | None) -> None:
        """Paste the clipboard's components at ``at`` (scene units), else at :meth:`paste_target`."""
        data = QApplication.clipboard().mimeData()
        if data is None or not data.hasFormat(CLIPBOARD_MIME):
            self.show_message("Nothing to paste: copy components of a design first")
            return
        text = bytes(data.data(CLIPBOARD_MIME)).decode()
        try:
            new = self.editor.paste_data(text, at=at or self.paste_target())
        except RefusedEdit:
            return
        self.scene.select_ids(new)
        self.show_message(f"Pasted {len(new):,} component(s) at the pointer")

    def duplicate(self) -> None:
        ids = self.selected()
        if ids:
            self.scene.select_ids(self.editor.duplicate(ids))

    def select_all(self) -> None:
        for item in self.scene.comp_items.values():
            if item.parentItem() is None:
                item.setSelected(True)

    def auto_layout(self) -> None:
        self.editor.auto_layout()
        self.view.zoom_to_fit()

    def about(self) -> None:
        from designer import __version__

        QMessageBox.about(self, APP_NAME, f"<b>{APP_NAME}</b> {__version__}<br>Design GPU training "
                          "clusters with DPUs, NICs, switches and storage.")

    # ----------------------------------------------------------------- runs
    def run(self) -> None:
        """Run the current design host-managed and DPU-offloaded in the run view."""
        view = self.load_run_view()
        if view is None:
            self.show_message("This installation has no run view")
            return
        dock = self.docks.get("Run")
        if dock is not None:
            dock.show()
            dock.raise_()
            wanted = RUN_DOCK_SHARE * self.height()
            if hasattr(view, "wanted_height"):  # the plots whole, no scrolling, if the window allows
                wanted = max(wanted, min(view.wanted_height() + 30, RUN_DOCK_MAX * self.height()))
            if dock.height() < wanted:
                self.resizeDocks([dock], [int(wanted)], Qt.Vertical)
        view.run_design()

    def cancel_run(self, wait: bool = False) -> None:
        """Stop the run; with ``wait``, also wait for a cancelled engine step to end."""
        if self.run_view is not None:
            self.run_view.cancel(wait=wait)

    def show_utilization(self, link_util, marked, peak=None) -> None:
        """Colour the canvas cables by a run's utilizations (None clears) and mark bottlenecks:
        ``link_util`` averaged over the iteration (``Result.link_mean_utilization``), ``peak`` each
        cable's busiest phase (``Result.links``), which View > "Cable colours: busiest phase"
        shows instead."""
        if hasattr(self.scene, "show_utilization"):
            self.scene.show_utilization(link_util, set(marked), peak=peak)

    def _overlay_peak(self, on: bool) -> None:
        if hasattr(self.scene, "set_overlay_view"):
            self.scene.set_overlay_view("peak" if on else "mean")

    def _sync_overlay_action(self) -> None:
        """The menu's tick follows the view (the canvas key's click switches it too)."""
        action = getattr(self, "actions_by_name", {}).get("overlay_peak")
        if action is not None:
            blocked = action.blockSignals(True)
            action.setChecked(getattr(self.scene, "overlay_view", "mean") == "peak")
            action.blockSignals(blocked)

    def open_elevation(self):
        from designer.gui.elevation_view import open_elevation

        return open_elevation(self)

    def open_plan(self) -> None:
        from designer.gui.plan_dialog import open_plan_dialog

        open_plan_dialog(self)

    def open_optimize(self) -> None:
        from designer.gui.optimize_dialog import open_optimize_dialog

        open_optimize_dialog(self)

    def open_sweep(self) -> None:
        from designer.gui.sweepdialog import SweepDialog

        if self.sweep_dialog is None:
            self.sweep_dialog = SweepDialog(self.catalog, self)
        self.sweep_dialog.set_design(self.design)
        self.sweep_dialog.show()
        self.sweep_dialog.raise_()
