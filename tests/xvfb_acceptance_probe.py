"""Driven by tests/test_gui_xvfb.py under a real X server: New from template (64-server rail,
BlueField-3) -> edit (a link's lanes) -> Run -> report PDF and cabling CSV; prints one JSON
line with the figures the window, the report and the CSV show. Argument: a work folder."""

import json
import re
import sys
import time
from pathlib import Path

from PySide6.QtWidgets import QDialog, QMessageBox

from designer.gui.app import make_app
from designer.gui.mainwindow import MainWindow
from designer.gui.template_dialog import TemplateDialog
from designer.report.names import STEADY_DAYS, TIMELINE_DAYS

work = Path(sys.argv[1])
app = make_app()
QMessageBox.question = staticmethod(lambda *a, **k: QMessageBox.Discard)


def answer(dialog):
    dialog.kind.setCurrentIndex(dialog.kind.findData("rail-optimized"))
    fields = dialog.fields["rail-optimized"]
    fields["servers"].setValue(64)
    fields["dpu"].setCurrentIndex(fields["dpu"].findData("bluefield-3"))
    return QDialog.Accepted


TemplateDialog.exec = answer
window = MainWindow()
window.resize(1500, 950)
window.show()


def pump(seconds=0.3):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.005)


pump(1.0)
window.new_from_template()
pump(1.0)
topo = window.design.topology
# edit: one two-lane link made one lane (a cable fewer; the links stay as many)
victim = next(link.id for link in topo.links.values() if link.lanes > 1)
window.scene.select_ids([victim])
window.editor.set_fields([victim], "lanes", 1)
pump(0.5)
finished = []
view = window.load_run_view()
view.run_finished.connect(lambda *a: finished.append(1))
window.actions_by_name["run"].trigger()
end = time.monotonic() + 300
while not finished and time.monotonic() < end and not view.status.text().startswith("Error"):
    app.processEvents()
    time.sleep(0.01)
pump(0.5)
window._update_counts()
status = window._counts.text()
rows = {row.label: row.values for row in view.engine.rows if row.values}
summary_cols = {view.table.horizontalHeaderItem(c).text().replace("\n", " "): c
                for c in range(view.table.columnCount())}
timeline_days = [view.table.item(r, summary_cols[TIMELINE_DAYS]).text()
                 for r in range(view.table.rowCount())]
scroll = view.tabs.widget(0)
shot = work / "x-window.png"
app.primaryScreen().grabWindow(0).save(str(shot), "PNG")
design_file = work / "rail64.json"
window.save_to(str(design_file))
results = {s: {"iteration_time_s": r.iteration_time_s, "training_time_days": r.training_time_days}
           for s, r in view.results.items()}
print(json.dumps({
    "platform": app.platformName(), "finished": bool(finished), "status": status,
    "run_status": view.status.text(),
    "servers": len(topo.servers()), "deleted": victim, "design": str(design_file),
    "iteration": rows.get("Iteration time (s)"), "steady_days": rows.get(STEADY_DAYS),
    "timeline_days": timeline_days, "results": results,
    "plots_scroll": scroll.verticalScrollBar().maximum(), "shot": str(shot)}))
window.autosaver.discard()
