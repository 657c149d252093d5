"""PySide6 6.12.0 on CPython 3.11 aborts (none_dealloc) after a few thousand void Qt calls; the
project pins PySide6 < 6.12 there. This runs 20,000 such calls in a child process so that a bad
PySide6 build shows up as a failed test instead of a crashed test session."""

import os
import subprocess
import sys

SCRIPT = """
from PySide6.QtWidgets import QApplication, QGraphicsRectItem, QGraphicsScene
app = QApplication([])
scene = QGraphicsScene()
item = QGraphicsRectItem(0, 0, 10, 10)
scene.addItem(item)
for i in range(20000):
    item.setPos(i % 97, i % 89)      # returns void
    item.setZValue(i % 3)            # returns void
print("done", item.pos().x())
"""


def test_many_void_qt_calls_do_not_abort():
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("done")
