"""Undo commands: every edit of a design is one :class:`ModelCommand`.

An *action* is a function that changes the design only through ``Topology`` and ``Design`` methods.
:func:`push` runs it once and records the :class:`ChangeEvent` s the model sends meanwhile. Those
events carry copies of the old and new state, so undo plays them backwards (inverting each) and
redo plays them forwards. The scene never takes part: it follows the same events like any
subscriber (the orange-canvas-core pattern: items never change the model, commands change only the
model).

Commands with the same ``merge_key`` that follow each other merge into one undo step (a spin-box
drag on one field of one selection is one step).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Callable

from PySide6.QtGui import QUndoCommand

from designer.topology.design import Design
from designer.topology.model import ChangeEvent, Component, Link

#: the one id Qt uses to offer merges; ``merge_key`` decides whether two commands really merge
_MERGE_ID = 0x5D51


def _fields(obj: Component | Link) -> dict[str, Any]:
    data = asdict(obj)
    data.pop("id")
    data.pop("kind", None)
    return data


def apply_event(design: Design, event: ChangeEvent, forward: bool) -> None:
    """Replay one recorded event on ``design`` (``forward=False`` applies its inverse)."""
    topo = design.topology
    old, new = (event.old, event.new) if forward else (event.new, event.old)
    kind = event.type
    if kind == "design_changed":
        design.set(event.id, new)
    elif kind.startswith("component_"):
        if old is None:
            topo.add_component(new)
        elif new is None:
            topo.remove_component(event.id)
        else:
            topo.update_component(event.id, **_fields(new))
    elif kind.startswith("link_"):
        if old is None:
            topo.add_link(new)
        elif new is None:
            topo.remove_link(event.id)
        else:
            topo.update_link(event.id, **_fields(new))
    else:
        raise ValueError(f"cannot replay a '{kind}' event")


def _compress(events: list[ChangeEvent]) -> list[ChangeEvent]:
    """Fold consecutive changes of one object into one event (first old, last new)."""
    out: list[ChangeEvent] = []
    for ev in events:
        prev = out[-1] if out else None
        if (prev is not None and prev.type == ev.type and prev.id == ev.id
                and ev.type in ("component_changed", "link_changed", "design_changed")):
            out[-1] = ChangeEvent(ev.type, ev.id, prev.old, ev.new)
        else:
            out.append(ev)
    return out


def record(design: Design, action: Callable[[Design], Any]) -> list[ChangeEvent]:
    """Run ``action(design)`` and return the events it caused; on an error, undo them and re-raise."""
    events: list[ChangeEvent] = []
    design.subscribe(events.append)
    try:
        action(design)
    except Exception:
        design.unsubscribe(events.append)
        for ev in reversed(events):
            apply_event(design, ev, forward=False)
        raise
    design.unsubscribe(events.append)
    return _compress(events)


class ModelCommand(QUndoCommand):
    """One undoable edit, made of the events its action caused (see :func:`push`)."""

    def __init__(self, design: Design, text: str, events: list[ChangeEvent],
                 merge_key: Any = None) -> None:
        super().__init__(text)
        self.design = design
        self.events = events
        self.merge_key = merge_key
        self._applied = True  # the action already ran when the command was made

    def redo(self) -> None:
        if self._applied:
            self._applied = False
            return
        for ev in self.events:
            apply_event(self.design, ev, forward=True)

    def undo(self) -> None:
        for ev in reversed(self.events):
            apply_event(self.design, ev, forward=False)

    def id(self) -> int:  # noqa: A003 - Qt's name
        return _MERGE_ID if self.merge_key is not None else -1

    def mergeWith(self, other: QUndoCommand) -> bool:  # noqa: N802 - Qt's name
        if not isinstance(other, ModelCommand) or other.merge_key != self.merge_key:
            return False
        self.events = _compress(self.events + other.events)
        return True


def push(stack, design: Design, text: str, action: Callable[[Design], Any],
         merge_key: Any = None) -> ModelCommand | None:
    """Run ``action`` now and put it on ``stack`` (a QUndoStack) as one undoable step.

    Errors raised by the action reach the caller with the model unchanged. An action that changes
    nothing pushes nothing (returns None).
    """
    events = record(design, action)
    if not events:
        return None
    cmd = ModelCommand(design, text, events, merge_key)
    stack.push(cmd)
    return cmd
