"""Small widget helpers shared by the panels."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox

#: characters a combo box asks room for; longer entries are elided and shown in full in the list
COMBO_CHARS = 14


def narrow_combo(box: QComboBox, chars: int = COMBO_CHARS) -> QComboBox:
    """Let ``box`` be narrower than its longest entry (Qt sizes a combo to fit it by default, which
    widened whole docks); the current entry is also its tooltip."""
    box.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
    box.setMinimumContentsLength(chars)
    box.currentTextChanged.connect(box.setToolTip)
    return box


def show_once(window, attr: str, make):
    """The window's dialog kept in ``window.<attr>`` (made by ``make(window)`` on first use),
    shown, raised and focused: Run → Plan layout and Run → Optimize keep one dialog each."""
    dialog = getattr(window, attr, None)
    if dialog is None:
        dialog = make(window)
        setattr(window, attr, dialog)
    dialog.show()
    dialog.raise_()
    dialog.activateWindow()
    return dialog
