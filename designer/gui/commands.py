"""Undo commands: every edit of a design is one :class:`ModelCommand`.

An *action* is a function that changes the design only through ``Topology`` and ``Design`` methods.
:func:`push` runs it once and records the :class:`ChangeEvent` s the model sends meanwhile. Those
events carry copies of the old and new state, so undo plays them backwards (inverting each) and
redo plays them forwards. The scene never takes part: it follows the same events like any
subscriber (the orange-canvas-core pattern: items never change the model, commands change only the
model).

Commands with the same ``merge_key`` that follow each other merge into one undo step (a spin-box
drag on one field of one selection is one step).

Undo back to where a file was saved gives the same bytes: a removed component or link that undo
adds back is put where it stood in the model's order (``Topology.restore_order``), and the id
counters are set back to what they were before the step (``Topology.reset_counters``); redo sets
them to what they were after it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from PySide6.QtGui import QUndoCommand

from designer.topology.design import Design
from designer.topology.model import ChangeEvent, Component, Link, as_dict

#: the one id Qt uses to offer merges; ``merge_key`` decides whether two commands really merge
_MERGE_ID = 0x5D51


def _fields(obj: Component | Link) -> dict[str, Any]:
    data = as_dict(obj)
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


@dataclass
class Order:
    """What undo and redo restore besides the events: the id counters before and after a step,
    and where each component and link the step removed stood in the model's order."""

    counters_before: dict[str, int]
    counters_after: dict[str, int] = field(default_factory=dict)
    component_at: dict[str, int] = field(default_factory=dict)
    link_at: dict[str, int] = field(default_factory=dict)

    def undone(self, design: Design) -> None:
        """After the step's events were played backwards: the order and counters before it."""
        design.topology.restore_order(self.component_at, self.link_at)
        design.topology.reset_counters(self.counters_before)

    def redone(self, design: Design) -> None:
        design.topology.reset_counters(self.counters_after)


def record(design: Design, action: Callable[[Design], Any]) -> list[ChangeEvent]:
    """Run ``action(design)`` and return the events it caused; on an error, undo them and re-raise."""
    return record_step(design, action)[0]


def record_step(design: Design, action: Callable[[Design], Any]) -> tuple[list[ChangeEvent], Order]:
    """:func:`record`, with the :class:`Order` that undo restores. The model's order is listed
    before the action (a few ms at 199k components) and kept only for what the step removed."""
    topo = design.topology
    events: list[ChangeEvent] = []
    order = Order(counters_before=topo.counters)
    comps_before, links_before = topo.order()
    design.subscribe(events.append)
    try:
        action(design)
    except Exception:
        design.unsubscribe(events.append)
        for ev in reversed(events):
            apply_event(design, ev, forward=False)
        _positions(order, events, comps_before, links_before)
        order.undone(design)
        raise
    design.unsubscribe(events.append)
    order.counters_after = topo.counters
    _positions(order, events, comps_before, links_before)
    return _compress(events), order


def _positions(order: Order, events: list[ChangeEvent], comps: list[str], links: list[str]) -> None:
    """Note in ``order`` where each component and link removed by ``events`` stood (in the order
    lists ``comps`` and ``links`` from before them); an item added by the step and removed again
    was not there before and needs no place."""
    gone = {ev.id for ev in events if ev.type == "component_removed"}
    gone_links = {ev.id for ev in events if ev.type == "link_removed"}
    if gone:
        order.component_at = {cid: i for i, cid in enumerate(comps) if cid in gone}
    if gone_links:
        order.link_at = {lid: i for i, lid in enumerate(links) if lid in gone_links}


class ModelCommand(QUndoCommand):
    """One undoable edit, made of the events its action caused (see :func:`push`)."""

    def __init__(self, design: Design, text: str, events: list[ChangeEvent],
                 merge_key: Any = None, order: Order | None = None) -> None:
        super().__init__(text)
        self.design = design
        self.events = events
        self.merge_key = merge_key
        self.order = order
        self._applied = True  # the action already ran when the command was made

    def redo(self) -> None:
        if self._applied:
            self._applied = False
            return
        for ev in self.events:
            apply_event(self.design, ev, forward=True)
        if self.order is not None:
            self.order.redone(self.design)

    def undo(self) -> None:
        for ev in reversed(self.events):
            apply_event(self.design, ev, forward=False)
        if self.order is not None:
            self.order.undone(self.design)

    def id(self) -> int:  # noqa: A003 - Qt's name
        return _MERGE_ID if self.merge_key is not None else -1

    def mergeWith(self, other: QUndoCommand) -> bool:  # noqa: N802 - Qt's name
        if not isinstance(other, ModelCommand) or other.merge_key != self.merge_key:
            return False
        if other.order is not None and (other.order.component_at or other.order.link_at):
            return False  # a step that removes stays a step of its own (its places are its own)
        self.events = _compress(self.events + other.events)
        if self.order is not None and other.order is not None:
            self.order.counters_after = other.order.counters_after
        return True


def push(stack, design: Design, text: str, action: Callable[[Design], Any],
         merge_key: Any = None) -> ModelCommand | None:
    """Run ``action`` now and put it on ``stack`` (a QUndoStack) as one undoable step.

    Errors raised by the action reach the caller with the model unchanged. An action that changes
    nothing pushes nothing (returns None).
    """
    events, order = record_step(design, action)
    if not events:
        return None
    cmd = ModelCommand(design, text, events, merge_key, order)
    stack.push(cmd)
    return cmd
