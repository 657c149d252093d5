"""The canvas's cables: one :class:`CableLayer` draws every link of the scene (a batch per pen,
cached pictures far out and screen tiles closer in), so that 40,000 cables draw quickly.

A :class:`Cable` is what the canvas knows of a link (its end points, utilization, marks); the
boxes of the components are :mod:`designer.gui.items`, whose colours the cables share.
"""

from __future__ import annotations

import math
import time
import weakref
from collections import OrderedDict
from operator import is_not

import numpy as np
import shiboken6
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt, QTimer
from PySide6.QtGui import QColor, QImage, QPainter, QPen, QRegion, QTransform
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem

from designer.gcpause import paused
from designer.gui.items import (BOTTLENECK, MANAGEMENT_COLOR, MEDIUM_COLOR, SELECT, SEVERITY_COLOR, UTIL_COLORS,
                                _cosmetic)
from designer.topology.model import Link


def util_bin(util: float) -> int:
    """Index into :data:`UTIL_COLORS` of a utilization (0..1; outside is clamped)."""
    return min(len(UTIL_COLORS) - 1, max(0, int(util * len(UTIL_COLORS))))


def util_pen(index: int) -> QPen:
    """Pen of utilization bin ``index``: its colour, 1 px wide when idle up to 4 px when saturated."""
    return _cosmetic(UTIL_COLORS[index], 1.0 + 3.0 * index / (len(UTIL_COLORS) - 1))


#: colours of rails 1, 2, ... (a server's NIC/DPU of slot k and its cables are rail k+1): Paul
#: Tol's "muted" qualitative scheme (personal.sron.nl/~pault, colour-blind safe, 9 colours) and
#: Okabe-Ito orange for a tenth; rails beyond ten repeat them
RAIL_COLORS = [QColor(c) for c in ("#332288", "#117733", "#CC6677", "#88CCEE", "#AA4499",
                                   "#44AA99", "#999933", "#882255", "#DDCC77", "#E69F00")]


def rail_color(rail: int) -> QColor:
    return RAIL_COLORS[rail % len(RAIL_COLORS)]


#: pen key of the management network's cables and bundles
MANAGEMENT = "management"

#: the end points of a cable that is drawn nowhere yet (a link to a component without an item)
NO_ENDS = (0.0, 0.0, 0.0, 0.0)


class Cable:
    """What the canvas knows of a link: the link, its two end points (scene), its marks, its
    rail (None: drawn in the medium's colour) and whether it is a management cable (``mgmt``:
    drawn muted, "management", under the overlay too: it carries no training traffic).

    The end points are ``ends`` (x1, y1, x2, y2), a tuple replaced (never changed in place) when
    the cable moves, which the layer tells by identity; ``line`` is them as a QLineF, made when
    first asked for (the layer draws from its own array: a new document's 500k cables need none)."""

    __slots__ = ("lid", "link", "ends", "_line", "problems", "util", "mean", "peak", "marked", "rail", "mgmt")

    def __init__(self, link: Link, line: QLineF | None = None,
                 ends: tuple[float, float, float, float] | None = None) -> None:
        self.lid = link.id
        self.link = link
        self._line = None
        self.ends = NO_ENDS if ends is None else ends
        if line is not None:
            self.line = line
        self.problems: list = []
        self.util: float | None = None   # what the overlay colours it by (0..1), None: no overlay
        self.mean: float | None = None   # its utilization averaged over the iteration
        self.peak: float | None = None   # and in its busiest phase, when the run gave both
        self.marked = False
        self.rail: int | None = None
        self.mgmt = False

    @property
    def line(self) -> QLineF:
        if self._line is None:
            self._line = QLineF(*self.ends)
        return self._line

    @line.setter
    def line(self, line: QLineF) -> None:
        self._line = line
        self.ends = (line.x1(), line.y1(), line.x2(), line.y2())

    def base_style(self) -> str:
        """Pen key without the overlay: "management", the rail ("rail:3") or the medium."""
        if self.mgmt:
            return MANAGEMENT
        return self.link.medium if self.rail is None else f"rail:{self.rail}"

    def style(self) -> str | int:
        """Pen key: the utilization bin under the overlay, else the rail or the medium (a
        management cable: "management" always)."""
        return self.base_style() if self.util is None or self.mgmt else util_bin(self.util)

    def tooltip(self) -> str:
        link = self.link
        lines = [f"{link.id}: {link.a} – {link.b}",
                 f"{link.medium}, {link.lanes}× {link.speed_Gbps:g} Gb/s"
                 + (f", rail {self.rail + 1}" if self.rail is not None and not self.mgmt else "")
                 + (", management network (no training traffic)" if self.mgmt else "")]
        if self.util is not None:
            if self.peak is not None and self.mean is not None:
                lines.append(f"utilization {_percent(self.mean)} averaged over the iteration, "
                             f"{_percent(self.peak)} in its busiest phase")
            else:
                lines.append(f"utilization {_percent(self.util)}")
            if self.marked:
                lines.append("bottleneck: the engine names it as limiting the step")
        lines += [f"{p.severity}: {p.message}" for p in self.problems]
        return "\n".join(lines)


def _percent(share: float) -> str:
    """A share 0..1 as a percentage: whole numbers, one decimal below 10 % (a cable 0.4 % busy
    is not "0 %"), "< 0.1 %" for a trace."""
    pct = share * 100
    if pct <= 0:
        return "0 %"
    if pct < 0.1:
        return "< 0.1 %"
    return f"{pct:.1f} %" if pct < 10 else f"{pct:.0f} %"


class Bundle:
    """Parallel cables between the same two groups (a rack with its servers' NICs/DPUs, or a
    switch, storage system or free-standing server), drawn far out as one line with their count."""

    __slots__ = ("a", "b", "line", "count", "style", "rails", "base_style")

    def __init__(self, a: str, b: str, line: QLineF, count: int, style: str | int,
                 rails: frozenset = frozenset()) -> None:
        self.a, self.b, self.line, self.count, self.style, self.rails = a, b, line, count, style, rails
        self.base_style = style if isinstance(style, str) else ""  # its pen without the overlay

    def width(self) -> float:
        """Pen width (px): 1 for one cable, growing with the log of the count, at most 7."""
        return min(7.0, 1.0 + 1.2 * math.log2(self.count))


#: bundles are drawn instead of cables when they are at most this share of the cables (else
#: there is little to merge: every cable would be its own bundle)
BUNDLE_SHARE = 0.7
#: a bundle's count is written on it when its line is this long on screen (px) ...
LABEL_MIN_PX = 60.0
#: ... and at most this many counts are written (more would cover the picture)
MAX_LABELS = 300


class CableLayer(QGraphicsItem):
    """Draws every cable of the scene, one ``drawLines`` batch per pen, under the boxes.

    Only the cables whose segment meets the exposed area are drawn (:meth:`crossing_rows`). Far
    out (below ``CACHE_LOD``) on screen, the cables come from a picture of all of them rendered once
    per zoom octave (``2**-k`` scene units per pixel) and scaled by at most 2. Closer in, on screen,
    they come from tiles of ``TILE_PX`` screen pixels rendered at the view's exact zoom and kept
    while it stays (at most ``MAX_TILES`` of them, least recently shown dropped first): panning
    blits them and draws only the tiles it uncovers; during a run of zoom steps they are scaled,
    and drawn anew once the zoom rests (:meth:`_paint_tiles`). A new zoom's tiles are drawn a few
    a frame (``BUDGET_MS``), nearest the centre first, while the last zoom's tiles stand in for the
    others, scaled (from any zoom, or the picture far out), so that no frame waits for all of them;
    far out a new picture is drawn in batches the same way. An edit drops only the tiles its cables
    meet, before or after, and draws them in the next frame; far out, the cables it edited are
    drawn over a picture of the others until the edits stop (:meth:`_invalidate`). A restyle of
    most cables (the overlay) keeps the old tiles and pictures as stand-ins while the new ones are
    drawn. Selected cables, cables with problems and bottlenecks are drawn on top with their own
    pens, every frame. The layer takes no mouse buttons: the scene finds the cable under a point
    with :meth:`cable_at`.
    """

    CACHE_LOD = 0.35
    MAX_CACHE_PX = 4096
    MARGIN = 60.0  # scene units around the lines' bounds (wide pens far out)
    TILE_PX = 256
    MAX_TILES = 192         # 256 KiB each: 48 MiB; a frame that needs more keeps them till the next
    SETTLE_MS = 150
    REUSE_ZOOM = 2.0
    MAX_STAND_INS = 2       # older tiles stand in for missing ones from at most this many zooms
    BUDGET_MS = 10.0        # tile drawing a frame while older tiles stand in for the missing ones
    REACH_PX = 4.0          # how far (screen px) the widest pen and its antialiasing reach off a line
    BATCH = 2048            # cables drawn into a picture far out between two looks at the clock
    AT_ONCE_MS = 40.0       # an edit far out that needs a new picture draws it at once if it fits
    FOLD_MS = 1000          # no edit for this long: the moving cables go back into the picture

    def __init__(self, cables: dict[str, Cable]) -> None:
        super().__init__()
        self.cables = cables
        self.selected: set[str] = set()
        self.flagged: set[str] = set()  # with problems or marked as bottlenecks
        self._extent = QRectF()
        self.setZValue(-1)
        self.setAcceptedMouseButtons(Qt.NoButton)
        self.setFlag(QGraphicsItem.ItemUsesExtendedStyleOption)
        self._bounds = QRectF()
        self._dirty = True
        self._restyled = True  # pens may have changed since the last sync (else only lines moved)
        self._moved_lids: set[str] | None = None  # the only cables moved since it (None: unknown)
        self._ids: list[str] = []
        self._ends: list[tuple] = []  # Cable.ends of each row of ``_xy`` (replaced when one moves)
        self._xy = np.zeros((0, 4))
        self._known: tuple | None = None  # (ids, ends, xy) a new document's cables were made with
        self._lo = np.zeros((0, 2))
        self._hi = np.zeros((0, 2))
        self._bins = np.zeros(0, dtype=int)             # utilization bin of each row, -1: none
        self._media = np.zeros(0, dtype=object)         # and its medium
        self._groups: dict[str | int, np.ndarray] = {}
        self._cache: dict[int, QImage] = {}    # picture of all cables by zoom octave, when done
        self._jobs: dict[int, list] = {}       # octave: [picture, [(pen, rows)], group, rows done]
        #: pictures before the last change, by octave: (scene rect, picture, the ids it left out)
        self._stale: list[tuple[QRectF, QImage, set[str]]] = []
        self._far_at_once = False          # after an edit: draw the next picture in one frame
        self._moving: set[str] = set()     # edited far out: drawn on top, not in the pictures
        self._moving_rows = np.zeros(0, dtype=int)
        self._picture_bounds = QRectF()    # the scene rect the pictures and jobs show
        self._row: dict[str, int] = {}     # row of each id in ``_ids``
        self._far_shown = False            # whether the last frame on screen showed a picture
        self._tiles: OrderedDict[tuple[int, int], QImage | None] = OrderedDict()
        self._grid: tuple | None = None  # (zoom, sub-pixel x, y, antialiased) of the tiles
        self._stand_ins: list[tuple[tuple, dict]] = []  # (grid, tiles) of zooms left, newest first
        self._pending = QRectF()           # scene area of the tiles in view still to draw
        self._tile_ms = 5.0                # running estimates: a tile's cost, and a pixel's drawn
        self._gap_ms_px = 5.0 / 65536      # directly where no tile stands in
        self._batch_ms = 5.0               # and a batch of cables drawn into a picture far out
        self._last_tiled = float("-inf")  # time.monotonic() of the last frame drawn from tiles
        self._last_scale = 0.0             # and its zoom
        self._settle = QTimer()
        self._settle.setSingleShot(True)
        layer = weakref.ref(self)  # the timer's slot must not keep a dropped layer (and its tiles)
        self._settle.timeout.connect(lambda: layer() is not None and layer().settle())
        self._refine = QTimer()
        self._refine.setSingleShot(True)
        self._refine.timeout.connect(lambda: layer() is not None and layer().refine())
        self._bundles: list[Bundle] | None | bool = False  # False: to be worked out
        #: the bundles as arrays (:meth:`_index_bundles`): ends, counts, pen rows, by group
        self._b_ends = np.zeros((0, 4))
        self._b_counts = np.zeros(0, dtype=int)
        self._b_pens: list[tuple[tuple, np.ndarray]] = []   # ((width, style), rows) thin to thick
        self._b_of_group: dict[str, list[int]] = {}
        self._b_moved: set[str] = set()     # groups moved since the bundles' lines were placed
        self._b_boxes: dict[str, tuple | None] = {}  # each group's box when its lines were placed
        #: bundles moved far out (a drag): left out of the pictures, drawn on top every frame
        self._b_moving = np.zeros(0, dtype=bool)
        #: the bundle pictures by zoom octave: done (octave -> (image, scene rect)), being drawn
        #: in batches (octave -> [image, scene rect, pen index, rows done]) and from before the
        #: last change (image, scene rect, mask of the bundles it left out)
        self._bundle_images: dict[int, tuple[QImage, QRectF]] = {}
        self._b_jobs: dict[int, list] = {}
        self._b_stale: list[tuple[QImage, QRectF, np.ndarray]] = []
        self._b_pending = False            # the frame showed a stand-in: more batches to draw
        self._b_row_ms = 0.01              # running estimate of a bundle's cost in a picture
        self.bundles_rebuilt = 0  # bundles whose line was worked out anew (tests watch it)
        self.bundled = False      # whether the last frame drew bundles instead of cables
        self.bundles_drawn = 0    # how many bundle lines were drawn so far (tests watch it)
        self.tiles_rendered = 0  # how many tiles were drawn so far (tests watch it)
        self.batches_drawn = 0   # how many batches of cables went into pictures far out
        self.drawn_on_top = 0    # and how many cables were drawn over them (edited ones)
        self._fold = QTimer()
        self._fold.setSingleShot(True)
        self._fold.timeout.connect(lambda: layer() is not None and layer().fold())

    # ------------------------------------------------------------- contents
    def changed(self) -> None:
        """Cables were added, removed, moved or restyled: rebuild the batches before the next paint
        (which finds what changed and drops the tiles and pictures it makes wrong, :meth:`_sync`)."""
        self._dirty = True
        self._restyled = True
        self._moved_lids = None  # a full look at every cable in the next sync
        if self._bundles is not False:
            self._drop_bundle_pictures()
        self._bundles = False
        self._b_moved.clear()
        self.update()

    def restyled(self) -> None:
        """The cables' pens changed, not their ends (the overlay on, off or new figures): as
        :meth:`changed`, but the bundles are only restyled (the scene's ``restyler``), not
        worked out anew."""
        bundles = self._bundles
        self.changed()
        if isinstance(bundles, list) and self.restyler is not None and self.restyler(bundles):
            self._bundles = bundles
            self._index_bundles()

    #: set by the scene: (bundles) -> whether it restyled them for the cables' current pens
    restyler = None

    def moved(self, groups, lids=None) -> None:
        """Cables were moved with the boxes of ``groups`` (:meth:`DesignScene.group_of`; their
        new lines are set): the batches are rebuilt before the next paint, as after
        :meth:`changed`, but the bundles stay; only the lines of those touching ``groups`` are
        worked out anew, and far out they are drawn over a picture of the others. With ``lids``
        (the moved cables' ids) the next sync reads only their rows, not every cable's."""
        if lids is None or (self._dirty and self._moved_lids is None):
            self._moved_lids = None  # a full sync (already due, or the moved ones not known)
        else:
            self._moved_lids = (self._moved_lids or set()) | set(lids)
        self._dirty = True
        if self._bundles is not False:
            self._b_moved.update(g for g in groups if g is not None)
        self.update()

    def set_extent(self, rect: QRectF) -> None:
        """The area the layer may paint in (the scene rect, which holds every cable end)."""
        if rect != self._extent:
            self.prepareGeometryChange()
            self._extent = QRectF(rect)

    def known(self, ids: list[str], ends: list[tuple], xy: np.ndarray) -> None:
        """The cables ``ids`` were just made with end points ``ends``, which are the rows of ``xy``:
        the next :meth:`_sync` takes its array from here instead of from 500k tuples."""
        self._known = (ids, ends, xy)

    def _sync(self) -> None:
        """Rebuild the batches from ``cables``; an edit that set new lines on a few cables costs
        little (the rows of the others are kept: ``cable.ends`` is replaced, never changed in place)."""
        if not self._dirty:
            return
        self._dirty = False
        old = (self._ids, self._xy, self._bins, self._media)
        moved, self._moved_lids = self._moved_lids, None
        row = self._row
        if (moved is not None and not self._restyled and self._known is None
                and len(self.cables) == len(self._ids) and all(lid in row for lid in moved)):
            # only the lines of ``moved`` changed since the last sync (:meth:`moved`; an add or
            # remove would have asked for a full one): their rows, not every cable's
            ids, ends, xy = self._ids, list(self._ends), self._xy.copy()
            for lid in moved:
                n = row[lid]
                ends[n] = self.cables[lid].ends
                xy[n] = ends[n]
            self._ends, self._xy = ends, xy
            self._lo = np.minimum(xy[:, :2], xy[:, 2:])
            self._hi = np.maximum(xy[:, :2], xy[:, 2:])
            self._finish_sync(old)
            return
        cables = list(self.cables.values())
        ids, ends = list(self.cables), [c.ends for c in cables]
        base = (self._ids, self._ends, self._xy)
        if self._known is not None and ids != self._ids and self._known[0] == ids:
            base = self._known
        self._known = None
        if ids == base[0]:
            xy = base[2].copy()
            replaced = np.fromiter(map(is_not, ends, base[1]), dtype=bool, count=len(ends))
            for n in np.nonzero(replaced)[0].tolist():
                xy[n] = ends[n]
        else:
            xy = np.array(ends, dtype=float).reshape(-1, 4)
        if ids != self._ids:
            self._row = dict(zip(ids, range(len(ids))))
        self._ids, self._ends, self._xy = ids, ends, xy
        self._lo = np.minimum(self._xy[:, :2], self._xy[:, 2:])
        self._hi = np.maximum(self._xy[:, :2], self._xy[:, 2:])
        restyled, self._restyled = self._restyled, False
        if not restyled and ids == old[0]:  # only moved (:meth:`moved`): the pens' rows stay
            bins, media = self._bins, self._media
        else:  # pen keys (Cable.style): the utilization bin (util_bin) under the overlay, else the medium
            util = np.array([c.util for c in cables], dtype=float)  # None: nan
            bins = np.full(len(cables), -1)
            busy = ~np.isnan(util)
            bins[busy] = np.clip(util[busy] * len(UTIL_COLORS), 0, len(UTIL_COLORS) - 1).astype(int)
            styles = [c.base_style() for c in cables]
            media = np.array(styles, dtype=object)
        if not (ids == old[0] and np.array_equal(bins, self._bins)
                and np.array_equal(media, self._media)):  # else (cables moved) the pens' rows stay
            groups: dict[str | int, np.ndarray] = {}  # thin to thick: the media, then the bins
            idle = bins < 0
            # each medium/rail style numbered, so that its rows are found comparing integers
            number = {style: n for n, style in enumerate(dict.fromkeys(styles))}
            code = np.fromiter(map(number.__getitem__, styles), dtype=np.int64, count=len(styles))
            for medium in sorted(set(media[idle].tolist()), key=lambda m: str(m).zfill(3)):
                groups[medium] = np.nonzero(idle & (code == number[medium]))[0]
            for b in sorted(set(bins[~idle].tolist())):
                groups[b] = np.nonzero(bins == b)[0]
            self._groups = groups
        self._bins, self._media = bins, media
        self._finish_sync(old)

    def _finish_sync(self, old: tuple) -> None:
        """The end of a sync: the lines' bounds, and what the change from ``old`` (ids, xy,
        bins, media) makes wrong dropped (:meth:`_invalidate`)."""
        self._bounds = QRectF()
        if len(self._xy):
            lo, hi = self._lo.min(axis=0), self._hi.max(axis=0)
            self._bounds = QRectF(lo[0], lo[1], hi[0] - lo[0], hi[1] - lo[1]).adjusted(
                -self.MARGIN, -self.MARGIN, self.MARGIN, self.MARGIN)
        self._invalidate(*old)
        self._moving_rows = self._rows_of(self._moving)

    def _rows_of(self, lids: set[str]) -> np.ndarray:
        """Rows (ascending) of the cables ``lids`` that are still there."""
        return np.array(sorted(self._row[i] for i in lids if i in self._row), dtype=int)

    def _changed_segments(self, ids: list, xy: np.ndarray, bins: np.ndarray,
                          media: np.ndarray) -> tuple[np.ndarray, set[str]] | None:
        """(x1, y1, x2, y2) of the cables that differ from the state ``ids``, ``xy``, ``bins``,
        ``media`` (before and after: a moved cable gives both) and their ids (added and removed
        ones too), or None when most of them changed (a restyle, another design)."""
        if ids == self._ids:
            moved = (np.any(xy != self._xy, axis=1) | (bins != self._bins)
                     | ((bins < 0) & (media != self._media)))
            if moved.sum() * 4 > len(ids):
                return None
            return (np.concatenate([xy[moved], self._xy[moved]]),
                    {ids[n] for n in np.nonzero(moved)[0].tolist()})
        before = {lid: n for n, lid in enumerate(ids)}
        after = {lid: n for n, lid in enumerate(self._ids)}

        def same(n: int, m: int) -> bool:
            return (bins[n] == self._bins[m] and (bins[n] >= 0 or media[n] == self._media[m])
                    and bool(np.all(xy[n] == self._xy[m])))

        gone = [n for lid, n in before.items() if lid not in after or not same(n, after[lid])]
        new = [m for lid, m in after.items() if lid not in before or not same(before[lid], m)]
        if (len(gone) + len(new)) * 4 > max(len(ids), len(self._ids)) * 2:
            return None
        return (np.concatenate([xy[gone].reshape(-1, 4), self._xy[new].reshape(-1, 4)]),
                {ids[n] for n in gone} | {self._ids[m] for m in new})

    def _invalidate(self, ids: list, xy: np.ndarray, bins: np.ndarray, media: np.ndarray) -> None:
        """Drop what the change from the state ``ids``, ``xy``, ``bins``, ``media`` makes wrong.

        A few cables changed (an edit): only the tiles that one of them meets, before or after,
        are drawn anew, in the next frame. Far out, the edited cables join the "moving" ones,
        which the pictures leave out and every frame draws on top (tens of lines): a drag that
        moves the same cables again keeps the pictures. An edit of others has the pictures drawn
        anew without them: at once if that is estimated to fit ``AT_ONCE_MS``, else in batches
        while the old pictures stand in (those few frames also show the newly edited cables
        where they were). :meth:`fold` puts them back ``FOLD_MS`` after the last edit. Most
        changed (the overlay, a new design): the tiles in view stand in, as they were, for the
        new ones drawn a few a frame, and the pictures as they were for the new ones."""
        if not ids and not len(self._xy):
            return
        change = self._changed_segments(ids, xy, bins, media) if ids else None
        if change is not None and not len(change[0]):
            return
        if change is None:
            self._drop_pictures(set())
            self._far_at_once = False
            if self._grid is not None and self._tiles:
                self._stand_ins.insert(0, (self._grid, dict(self._tiles)))
                del self._stand_ins[self.MAX_STAND_INS:]
            self._tiles = OrderedDict()
            return
        segments, edited = change
        if not self._far_shown:
            self._drop_pictures(set())
            self._far_at_once = False
        elif not edited <= self._moving:
            self._drop_pictures(self._moving | edited)
            # a batch's cost by the cables in it (the last one of a pen is partial)
            estimate = self._batch_ms * len(self._ids) / self.BATCH
            self._far_at_once = estimate <= self.AT_ONCE_MS
        elif ids != self._ids:  # the rows moved: the batches underway start anew
            self._jobs.clear()
        if self._moving:
            self._fold.start(self.FOLD_MS)
        for grid, tiles in [(self._grid, self._tiles)] + self._stand_ins:
            for k in [k for k in tiles if _meeting(segments, self._tile_area(k, grid)).any()]:
                del tiles[k]

    def _drop_pictures(self, moving: set[str]) -> None:
        """Have the pictures far out drawn anew, leaving out the cables ``moving``; those done
        stand in until then, with the cables they left out (and ``moving``) drawn on top."""
        if self._cache:
            self._stale = [(QRectF(self._picture_bounds), image, set(self._moving))
                           for _, image in sorted(self._cache.items())]
        else:
            self._stale = [(b, image, left_out | self._moving) for b, image, left_out in self._stale]
        self._cache.clear()
        self._jobs.clear()
        self._moving = moving

    def fold(self) -> None:
        """Put the moving cables back into the pictures far out (no edit for ``FOLD_MS``): they
        are drawn anew in batches; the pictures without them, and them on top, stand in."""
        self._fold.stop()
        if not shiboken6.isValid(self):
            return
        if self._b_moving.any():
            self._drop_bundle_pictures()
            self._b_moving = np.zeros(len(self._b_ends), dtype=bool)
            self.update()
        if not self._moving:
            return
        self._sync()
        self._drop_pictures(set())
        self._far_at_once = False
        self._moving_rows = self._rows_of(self._moving)
        self.update()

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt's name
        return self._extent

    def special(self) -> list[Cable]:
        """Cables drawn on top: selected, with problems, or marked as bottlenecks."""
        return [self.cables[i] for i in sorted(self.selected | self.flagged) if i in self.cables]

    def cable_at(self, pos: QPointF, tolerance: float) -> str | None:
        """Id of the cable nearest to ``pos`` within ``tolerance`` scene units, or None."""
        self._sync()
        if not len(self._xy):
            return None
        a, b = self._xy[:, :2], self._xy[:, 2:]
        p = np.array([pos.x(), pos.y()])
        d = b - a
        length2 = np.maximum((d * d).sum(axis=1), 1e-12)
        t = np.clip(((p - a) * d).sum(axis=1) / length2, 0.0, 1.0)
        dist = np.hypot(*(a + d * t[:, None] - p).T)
        best = int(np.argmin(dist))
        return self._ids[best] if dist[best] <= tolerance else None

    def cables_in(self, rect: QRectF) -> list[str]:
        """Ids of the cables wholly inside ``rect`` (scene)."""
        self._sync()
        x, y = self._xy[:, 0::2], self._xy[:, 1::2]
        inside = ((x >= rect.left()) & (x <= rect.right()) & (y >= rect.top()) & (y <= rect.bottom()))
        return [self._ids[i] for i in np.nonzero(inside.all(axis=1))[0]]

    def crossing_rows(self, rect: QRectF, among: np.ndarray | None = None) -> np.ndarray:
        """Rows (in ``_ids`` order) of the cables whose segment meets ``rect`` (scene, edges in),
        of all or of the rows ``among``.

        A segment misses a rectangle exactly when one of three axes separates them: x, y (the
        bounding boxes do not overlap) or the segment's normal (all four corners lie strictly on
        one side of its line) - the separating axis theorem for convex shapes.
        """
        left, right, top, bottom = rect.left(), rect.right(), rect.top(), rect.bottom()
        lo, hi = (self._lo, self._hi) if among is None else (self._lo[among], self._hi[among])
        rows = np.nonzero((hi[:, 0] >= left) & (lo[:, 0] <= right)
                          & (hi[:, 1] >= top) & (lo[:, 1] <= bottom))[0]
        if among is not None:
            rows = among[rows]
        if not len(rows):
            return rows
        return rows[_meeting(self._xy[rows], rect)]

    def cables_crossing(self, rect: QRectF) -> list[str]:
        """Ids of the cables that cross or touch ``rect`` (scene): the ones a view of it draws."""
        self._sync()
        return [self._ids[i] for i in self.crossing_rows(rect)]

    # -------------------------------------------------------------- painting
    @staticmethod
    def pen(style: str | int) -> QPen:
        if isinstance(style, int):
            return util_pen(style)
        if style.startswith("rail:"):
            return _cosmetic(rail_color(int(style[5:])), 1.0)
        if style == MANAGEMENT:
            return _cosmetic(MANAGEMENT_COLOR, 1.0)
        return _cosmetic(MEDIUM_COLOR.get(style, QColor("#999")), 1.0)

    @staticmethod
    def _image_painter(image: QImage) -> QPainter:
        """A painter on a cable picture or tile. Its explicit clip to the image is no limit but lets
        Qt's raster engine write line pixels directly: without it, on PySide6 6.11, the 50 %
        bench's 12,500 cables took 160 ms aliased (x-major lines 14x slower than steep ones)
        instead of 20 ms, and 72 ms antialiased instead of 44 ms."""
        painter = QPainter(image)
        painter.setClipRect(image.rect())
        return painter

    def _draw(self, painter: QPainter, rows: np.ndarray | None) -> None:
        """The cables of ``rows`` (all if None), a batch per pen, thin to thick."""
        chosen = None
        if rows is not None:
            chosen = np.zeros(len(self._ids), dtype=bool)
            chosen[rows] = True
        for style, group in self._groups.items():
            if chosen is not None:
                group = group[chosen[group]]
            if len(group):
                painter.setPen(self.pen(style))
                draw_segments(painter, self._xy[group])

    def _level(self, lod: float) -> int | None:
        """The zoom octave (``2**level`` pixels a scene unit) just above ``lod`` whose picture of
        all cables shows them there, or None when that picture would be too big."""
        level = max(-12, int(np.ceil(np.log2(max(lod, 1e-6)))))
        if max(self._bounds.width(), self._bounds.height()) * 2.0 ** level > self.MAX_CACHE_PX:
            return None
        return level

    def _picture(self, level: int, start: float) -> QImage | None:
        """The picture of all cables but the moving ones at octave ``level`` (of the scene rect
        ``_picture_bounds``), or None while it is being drawn: batches of ``BATCH`` cables a
        frame until ``BUDGET_MS`` since ``start`` are spent (at least one). The batches keep the
        order of a drawing at once (pen by pen, thin to thick; within a pen any order gives the
        same opaque pixels), so the picture ends with its pixels."""
        image = self._cache.get(level)
        if image is not None:
            return image
        job = self._jobs.get(level)
        scale = 2.0 ** level
        if job is None:
            if not self._cache and not self._jobs:
                self._picture_bounds = QRectF(self._bounds)
            w = max(1, int(np.ceil(self._picture_bounds.width() * scale)))
            h = max(1, int(np.ceil(self._picture_bounds.height() * scale)))
            image = QImage(w, h, QImage.Format_ARGB32_Premultiplied)
            image.fill(Qt.transparent)
            kept = np.ones(len(self._ids), dtype=bool)
            kept[self._moving_rows] = False
            groups = [(style, rows[kept[rows]]) for style, rows in self._groups.items()]
            job = self._jobs[level] = [image, [(st, rows) for st, rows in groups if len(rows)], 0, 0]
        image, groups, group, done = job
        p = self._image_painter(image)
        p.scale(scale, scale)
        p.translate(-self._picture_bounds.topLeft())
        batches = 0
        while group < len(groups):
            if (batches and not self._far_at_once
                    and (time.perf_counter() - start) * 1000 + self._batch_ms > self.BUDGET_MS):
                break
            style, rows = groups[group]
            t = time.perf_counter()
            p.setPen(self.pen(style))
            draw_segments(p, self._xy[rows[done:done + self.BATCH]])
            if len(rows) - done >= self.BATCH:  # a running estimate of a full batch's cost
                self._batch_ms = (self._batch_ms + (time.perf_counter() - t) * 1000) / 2
            self.batches_drawn += 1
            batches += 1
            done += self.BATCH
            if done >= len(rows):
                group, done = group + 1, 0
        p.end()
        if group < len(groups):
            job[2:] = group, done
            return None
        del self._jobs[level]
        self._cache[level] = image
        self._far_at_once = False
        return image

    def _far(self, painter: QPainter, level: int, start: float) -> None:
        """Draw the cables from the picture of octave ``level`` and the moving ones on top; until
        it is done, a picture of another octave stands in (the nearest done, else one from before
        the last change, with the cables it left out on top, else the part drawn so far) and
        :meth:`refine` asks for the next frame."""
        painter.setRenderHint(QPainter.SmoothPixmapTransform, True)
        image = self._picture(level, start)
        on_top = self._moving_rows
        if image is not None:
            self._pending = QRectF()
            self._stale.clear()
            painter.drawImage(self._picture_bounds, image)
        else:
            if self._cache:
                near = min(self._cache, key=lambda k: (abs(k - level), -k))
                painter.drawImage(self._picture_bounds, self._cache[near])
            elif self._stale:
                width = self._jobs[level][0].width()
                bounds, old, left_out = min(self._stale, key=lambda s: abs(s[1].width() - width))
                painter.drawImage(bounds, old)
                on_top = self._rows_of(left_out | self._moving)
            else:
                painter.drawImage(self._picture_bounds, self._jobs[level][0])
            self._pending = QRectF(self._bounds)
            self._refine.start(0)
        if len(on_top):
            self._draw(painter, on_top)
            self.drawn_on_top += len(on_top)

    def _tile_area(self, tile: tuple[int, int], grid: tuple) -> QRectF:
        """The scene rect a tile of ``grid`` shows, widened by the reach of a pen."""
        scale, ox, oy, _ = grid
        size, (i, j), reach = self.TILE_PX, tile, self.REACH_PX / scale
        return QRectF((i * size - ox) / scale, (j * size - oy) / scale,
                      size / scale, size / scale).adjusted(-reach, -reach, reach, reach)

    def _tile(self, tile: tuple[int, int], grid: tuple, among: np.ndarray) -> QImage | None:
        """Tile ``tile`` (column, row of ``TILE_PX`` squares) of ``grid`` (zoom, sub-pixel offset,
        antialiasing) drawn from the cables ``among``, or None when none crosses it."""
        rows = self.crossing_rows(self._tile_area(tile, grid), among)
        if not len(rows):
            return None
        size = self.TILE_PX
        scale, ox, oy, aa = grid
        image = QImage(size, size, QImage.Format_ARGB32_Premultiplied)
        image.fill(Qt.transparent)
        p = self._image_painter(image)
        p.setRenderHint(QPainter.Antialiasing, aa)
        p.translate(ox - tile[0] * size, oy - tile[1] * size)
        p.scale(scale, scale)
        self._draw(p, rows)
        p.end()
        self.tiles_rendered += 1
        return image

    @staticmethod
    def _layout(grid: tuple, transform: QTransform) -> tuple[float, float, float]:
        """(ratio, x0, y0): pixel ``p`` of ``grid``'s tiles lands on device point
        ``ratio * p + (x0, y0)`` under the view's ``transform`` (ratio 1 at the grid's own zoom)."""
        ratio = transform.m11() / grid[0]
        return ratio, transform.dx() - ratio * grid[1], transform.dy() - ratio * grid[2]

    def _device_rect(self, tile: tuple[int, int], lay: tuple[float, float, float]) -> QRectF:
        ratio, x0, y0 = lay
        step = ratio * self.TILE_PX
        return QRectF(tile[0] * step + x0, tile[1] * step + y0, step, step)

    def _keys(self, rect: QRectF, lay: tuple[float, float, float]) -> list[tuple[int, int]]:
        """The tiles of a layout that overlap ``rect`` (device), row by row (one that only
        touches its right or bottom edge shows nothing of it)."""
        if rect.isEmpty():
            return []
        ratio, x0, y0 = lay
        step = ratio * self.TILE_PX
        cols = range(math.floor((rect.left() - x0) / step), math.ceil((rect.right() - x0) / step))
        return [(i, j) for j in range(math.floor((rect.top() - y0) / step),
                                      math.ceil((rect.bottom() - y0) / step)) for i in cols]

    def _retarget(self, grid: tuple, transform: QTransform, viewport: QRectF) -> None:
        """Start the tiles of ``grid``; those of the grid left that land in ``viewport`` stand in
        for the new ones until they are drawn (the newest first, at most ``MAX_STAND_INS`` grids)."""
        if self._grid is not None and self._tiles:
            lay = self._layout(self._grid, transform)
            kept = {k: image for k, image in self._tiles.items()
                    if self._device_rect(k, lay).intersects(viewport)}
            if kept:
                self._stand_ins.insert(0, (self._grid, kept))
        del self._stand_ins[self.MAX_STAND_INS:]
        self._grid, self._tiles = grid, OrderedDict()

    @staticmethod
    def _near(grid: tuple, scale: float, limit: float) -> bool:
        return 1 / limit <= scale / grid[0] <= limit

    def _paint_tiles(self, painter: QPainter, exposed: QRectF, aa: bool, viewport: QRectF) -> None:
        """Draw the cables under ``exposed`` (scene) from tiles; ``viewport``: the device's rect.

        Tiles sit on the screen's pixel grid: the view's translation is split into whole pixels
        (where the tiles are blitted) and a fraction (rendered into them), so a tiled frame has
        the pixels of a direct one and panning by whole pixels keeps every tile.

        A zoom step that follows the last frame within ``SETTLE_MS`` (a wheel turning, keys held)
        scales the tiles of the zoom it started from (up to ``REUSE_ZOOM`` times in or out) instead
        of drawing thousands of cables anew per step; ``SETTLE_MS`` after the last step
        :meth:`settle` has them drawn sharp at the zoom reached. A new zoom (that, or a first step
        after a pause) draws its tiles progressively (:meth:`_render`): the tiles of the zoom left
        stand in, scaled, for those not drawn yet, and :meth:`refine` asks for the next frame.
        """
        start = time.perf_counter()
        transform = painter.worldTransform()
        scale = transform.m11()
        dx, dy = transform.dx(), transform.dy()
        exact = (scale, dx - round(dx), dy - round(dy), aa)
        now = time.monotonic()
        zooming = scale != self._last_scale and now - self._last_tiled < self.SETTLE_MS / 1000
        self._last_tiled, self._last_scale = now, scale
        grid = self._grid
        if exact != grid:
            if (self._tiles and grid is not None and (zooming or self._settle.isActive())
                    and self._near(grid, scale, self.REUSE_ZOOM)):
                if zooming:
                    self._settle.start(self.SETTLE_MS)
            else:
                self._settle.stop()
                self._retarget(exact, transform, viewport)
                grid = exact
        lay = self._layout(grid, transform)
        on_view = transform.mapRect(self._bounds).intersected(viewport)
        shown = transform.mapRect(exposed).intersected(on_view)
        keys = self._keys(shown, lay)
        stand_ins = [(tiles, self._layout(g, transform)) for g, tiles in self._stand_ins]
        far = None  # the sharpest picture far out, if one is done: it covers every cable
        if self._cache and not self._moving:
            far = (self._cache[max(self._cache)], transform.mapRect(self._picture_bounds))
        missing = [k for k in keys if k not in self._tiles]
        if missing:
            self._render(missing, grid, lay, shown, stand_ins, far, viewport.center(), start)
        painter.save()
        pending = [k for k in missing if k not in self._tiles]
        if pending:
            self._stand_in(painter, pending, lay, shown, stand_ins, far)
        shown_now = [k for k in keys if k in self._tiles]
        for k in shown_now:
            self._tiles.move_to_end(k)
        self._blit(painter, [(k, self._tiles[k]) for k in shown_now], lay)
        painter.restore()
        while len(self._tiles) > max(self.MAX_TILES, len(keys)):
            self._tiles.popitem(last=False)
        rest = QRectF()  # the view's tiles still to draw: the next frame's area
        for k in self._keys(on_view, lay):
            if k not in self._tiles:
                rest = rest.united(self._device_rect(k, lay))
        if rest.isEmpty():
            self._pending = QRectF()
            self._stand_ins.clear()
        else:
            self._pending = transform.inverted()[0].mapRect(rest.intersected(on_view))
            self._refine.start(0)

    def _render(self, missing: list, grid: tuple, lay: tuple, shown: QRectF, stand_ins: list,
                far: tuple | None, center: QPointF, start: float) -> None:
        """Draw tiles of ``missing`` (of ``grid``; ``shown``: the device area painted).

        The tiles that older ones (``stand_ins``) leave mostly uncovered at once: drawing their
        uncovered part directly frame after frame would cost more (a jump in zoom, or nothing to
        stand in; ``far``: (picture, device rect) of all cables far out, if any, covers what it
        spans). Then the others, those with a part no older tile covers first (drawn directly
        till then, see :meth:`_stand_in`), each nearest the ``center`` first, until the frame
        has spent ``BUDGET_MS`` since ``start``, counting the estimates of the next tile and of
        the uncovered parts; at least one a frame.
        """
        covered = QRegion()
        for tiles, glay in stand_ins:
            for k in self._keys(shown, glay):
                if k in tiles:
                    covered = covered.united(_pixels(self._device_rect(k, glay)))
        if far is not None:
            covered = covered.united(_pixels(far[1]))
        visible = {k: QRegion(self._device_rect(k, lay).intersected(shown).toAlignedRect())
                   for k in missing}
        gaps = {k: visible[k].subtracted(covered) for k in missing}
        mid_x, mid_y = center.x(), center.y()

        def order(k: tuple[int, int]) -> tuple[bool, bool, float]:
            c = self._device_rect(k, lay).center()
            mostly_covered = 2 * _area(gaps[k]) <= _area(visible[k])
            return mostly_covered, gaps[k].isEmpty(), abs(c.x() - mid_x) + abs(c.y() - mid_y)

        gap_px = sum(_area(g) for g in gaps.values())
        area = QRectF()
        for k in missing:
            area = area.united(self._tile_area(k, grid))
        among = None
        for n, k in enumerate(sorted(missing, key=order)):
            spent = (time.perf_counter() - start) * 1000
            if (n and order(k)[0]
                    and spent + self._tile_ms + gap_px * self._gap_ms_px > self.BUDGET_MS):
                break
            if among is None:
                among = self.crossing_rows(area)
            t = time.perf_counter()
            image = self._tile(k, grid, among)
            self._tiles[k] = image
            if image is not None:  # a running estimate of a tile's cost
                self._tile_ms = (self._tile_ms + (time.perf_counter() - t) * 1000) / 2
            gap_px -= _area(gaps[k])

    def _stand_in(self, painter: QPainter, pending: list, lay: tuple, shown: QRectF,
                  stand_ins: list, far: tuple | None) -> None:
        """Fill the device area of the tiles ``pending`` (not drawn yet) with the older tiles that
        cover it, scaled, the newest first, then with the picture ``far`` ((image, device rect)
        or None); draw what none covers directly, a rectangle at a time (a clip of one rectangle
        keeps Qt's fast line path, a ragged region would not)."""
        transform = painter.worldTransform()
        gap = QRegion()
        for k in pending:
            gap = gap.united(QRegion(self._device_rect(k, lay).intersected(shown).toAlignedRect()))
        for tiles, glay in stand_ins:
            if gap.isEmpty():
                return
            present = [k for k in self._keys(QRectF(gap.boundingRect()), glay) if k in tiles]
            if not present:
                continue
            painter.save()
            painter.resetTransform()  # the clip in device pixels
            painter.setClipRegion(gap, Qt.IntersectClip)
            self._blit(painter, [(k, tiles[k]) for k in present], glay)
            painter.restore()
            for k in present:
                gap = gap.subtracted(_pixels(self._device_rect(k, glay)))
        if far is not None and not gap.isEmpty():
            painter.save()
            painter.resetTransform()
            painter.setClipRegion(gap, Qt.IntersectClip)
            painter.setRenderHint(QPainter.SmoothPixmapTransform, True)
            painter.drawImage(far[1], far[0])
            painter.restore()
            gap = gap.subtracted(_pixels(far[1]))
        if gap.isEmpty():
            return
        t = time.perf_counter()
        inverse, reach = transform.inverted()[0], self.REACH_PX / transform.m11()
        among = self.crossing_rows(inverse.mapRect(QRectF(gap.boundingRect())).adjusted(
            -reach, -reach, reach, reach))
        for rect in gap:
            painter.save()
            painter.resetTransform()
            painter.setClipRect(rect, Qt.IntersectClip)
            painter.setWorldTransform(transform)
            self._draw(painter, self.crossing_rows(inverse.mapRect(QRectF(rect)).adjusted(
                -reach, -reach, reach, reach), among))
            painter.restore()
        spent = (time.perf_counter() - t) * 1000
        self._gap_ms_px = (self._gap_ms_px + spent / max(1, _area(gap))) / 2

    def _blit(self, painter: QPainter, images: list, lay: tuple[float, float, float]) -> None:
        """Draw tiles ``images`` ((key, image or None)) of a layout, scaled if its ratio is not 1,
        onto the device pixels whose centre they cover: neighbours meet on a pixel edge (at
        fractional edges, two half-covered pixels would leave a light seam between them)."""
        painter.resetTransform()
        painter.setRenderHint(QPainter.SmoothPixmapTransform, lay[0] != 1.0)
        for k, image in images:
            if image is None:
                continue
            rect = self._device_rect(k, lay)
            left, top = round(rect.left()), round(rect.top())
            if lay[0] == 1.0:
                painter.drawImage(QPointF(left, top), image)
            else:
                painter.drawImage(QRectF(left, top, round(rect.right()) - left,
                                         round(rect.bottom()) - top), image)

    @property
    def refining(self) -> bool:
        """Whether tiles in view are still to be drawn (scaled older ones stand in for them)."""
        return not self._pending.isEmpty() or self._b_pending

    def refine(self) -> None:
        """Repaint the part of the view whose tiles are missing: the frame draws more of them."""
        if not shiboken6.isValid(self):
            return
        if self._b_pending:
            self.update()
        elif not self._pending.isEmpty():
            self.update(self._pending)

    def settle(self) -> None:
        """Draw the cables anew at the current zoom from the next frame on (a zoom has stopped)."""
        self._settle.stop()
        self._last_scale = 0.0
        self._last_tiled = float("-inf")
        if shiboken6.isValid(self):  # the timer may outlive a layer its scene dropped
            self.update()

    # --------------------------------------------------------------- bundles
    #: set by the scene: () -> list[Bundle] of the current cables (None: nothing to bundle)
    bundler = None

    def bundles(self) -> list[Bundle] | None:
        """The bundles of the cables (kept until the next :meth:`changed`), or None when bundling
        would merge too few cables (:data:`BUNDLE_SHARE`) or the scene gives none. After a
        :meth:`moved`, only the bundles touching the moved groups get new lines (the scene's
        ``bundle_line``), and they join the moving ones (drawn on top far out)."""
        if self.bundler is None:
            return None
        if self._bundles is False:
            found = self.bundler()  # None when there is little to merge
            self._bundles = found if found and len(found) <= BUNDLE_SHARE * len(self.cables) else None
            self._b_moved.clear()
            self._index_bundles()
            self.bundles_rebuilt += len(self._bundles or ())
        elif self._b_moved and self._bundles:
            box, boxes = self.group_box, self._b_boxes
            moved = [g for g in self._b_moved if g in boxes and box(g) != boxes[g]]
            self._b_moved.clear()
            for g in moved:
                boxes[g] = box(g)
            touched = sorted({n for g in moved for n in self._b_of_group[g]})
            line_of = self.bundle_line
            bundles = self._bundles
            for n in touched:
                b = bundles[n]
                line = line_of(b.a, b.b) if line_of is not None else None
                if line is not None:
                    b.line = line
                    self._b_ends[n] = (line.x1(), line.y1(), line.x2(), line.y2())
            self.bundles_rebuilt += len(touched)
            if touched and not self._b_moving[touched].all():
                self._drop_bundle_pictures()  # the pictures are drawn anew without them
                self._b_moving[touched] = True
            if self._b_moving.any():
                self._fold.start(self.FOLD_MS)
        return self._bundles

    #: set by the scene: (group a, group b) -> QLineF of their bundle (None: not drawn), and
    #: group -> its box (x, y, width, height; None: none), which a bundle's line follows
    bundle_line = None
    group_box = None

    @paused
    def _index_bundles(self) -> None:
        """The bundles as arrays: their ends, counts, rows per pen (thin to thick) and by group."""
        bundles = self._bundles or []
        lines = [b.line for b in bundles]
        self._b_ends = np.array([(l.x1(), l.y1(), l.x2(), l.y2()) for l in lines],
                                dtype=float).reshape(-1, 4)
        self._b_counts = np.array([b.count for b in bundles], dtype=int)
        self._b_moving = np.zeros(len(bundles), dtype=bool)
        # pens by (width, style): Bundle.width of each count, rounded as drawn; thin to thick
        counts = np.maximum(self._b_counts, 1)
        widths = np.round(np.minimum(7.0, 1.0 + 1.2 * np.log2(counts)), 1)
        styles = [b.style for b in bundles]
        number = {st: n for n, st in enumerate(dict.fromkeys(styles))}
        style_no = np.fromiter(map(number.__getitem__, styles), dtype=np.int64, count=len(styles))
        keys, inverse = np.unique(np.column_stack([widths, style_no]), axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        by_style = list(number)
        order = np.argsort(inverse, kind="stable")
        cuts = np.cumsum(np.bincount(inverse, minlength=len(keys)))[:-1]
        self._b_pens = [((float(k[0]), by_style[int(k[1])]), rows)
                        for k, rows in zip(keys.tolist(), np.split(order, cuts))]
        self._b_pens.sort(key=lambda kv: kv[0][0])
        of_group: dict[str, list[int]] = {}
        for n, b in enumerate(bundles):
            of_group.setdefault(b.a, []).append(n)
            if b.b != b.a:
                of_group.setdefault(b.b, []).append(n)
        self._b_of_group = of_group
        box = self.group_box
        self._b_boxes = {g: box(g) for g in of_group} if box is not None else {}
        # pictures from before stand in as they are (their bundles are numbered anew)
        self._b_stale = [(image, rect, np.zeros(len(bundles), dtype=bool))
                         for image, rect, _ in self._b_stale]

    def _drop_bundle_pictures(self) -> None:
        """Have the bundle pictures drawn anew; the done ones stand in meanwhile, with the bundles
        they left out drawn on top."""
        if self._bundle_images:
            self._b_stale = [(image, rect, self._b_moving.copy())
                             for image, rect in self._bundle_images.values()]
        self._bundle_images.clear()
        self._b_jobs.clear()

    #: most pixels of a side of the cached bundle picture (larger views draw the bundles directly)
    BUNDLE_IMAGE_PX = 4096
    #: bundles drawn into a picture between two looks at the clock
    BUNDLE_BATCH = 1024

    def _bundle_octave(self, scale: float) -> int | None:
        """The zoom octave (``2**octave`` pixels a scene unit) of the picture that shows the bundles
        at ``scale``: the one just above it, else the one below (scaled up by less than 2) when
        that one would be too large; None when neither fits."""
        octave = math.ceil(math.log2(scale)) if scale > 0 else 0
        w, h = self._bounds.width(), self._bounds.height()
        for k in (octave, octave - 1):
            if max(w, h) * 2.0 ** k + 2 <= self.BUNDLE_IMAGE_PX:
                return k
        return None

    def _bundle_picture(self, octave: int, start: float) -> tuple[QImage, QRectF] | None:
        """The picture of the bundles but the moving ones at ``octave``, or None while it is being
        drawn: batches of at most ``BUNDLE_BATCH`` bundles, as many as the running estimate of a
        bundle's cost fits in ``BUDGET_MS`` since ``start`` (at least one batch), pen by pen as a
        drawing at once would."""
        done = self._bundle_images.get(octave)
        if done is not None:
            return done
        job = self._b_jobs.get(octave)
        zoom = 2.0 ** octave
        if job is None:
            bounds = QRectF(self._bounds)
            w, h = math.ceil(bounds.width() * zoom) + 2, math.ceil(bounds.height() * zoom) + 2
            picture = QImage(max(1, w), max(1, h), QImage.Format_ARGB32_Premultiplied)
            picture.fill(Qt.transparent)
            kept = ~self._b_moving
            pens = [(key, rows[kept[rows]]) for key, rows in self._b_pens]
            job = self._b_jobs[octave] = [picture, bounds, [(k, r) for k, r in pens if len(r)], 0, 0]
        picture, bounds, pens, pen, row = job
        p = self._image_painter(picture)
        p.setRenderHint(QPainter.Antialiasing, True)
        p.scale(zoom, zoom)
        p.translate(-bounds.left(), -bounds.top())
        batches = 0
        while pen < len(pens):
            left = self.BUDGET_MS - (time.perf_counter() - start) * 1000
            # as many as the time left is estimated to draw (a thick pen's cost more), at least
            # a sixteenth of a batch, and at least one batch a frame
            count = int(min(self.BUNDLE_BATCH, max(self.BUNDLE_BATCH // 16, left / self._b_row_ms)))
            if batches and left < count * self._b_row_ms:
                break
            key, rows = pens[pen]
            t = time.perf_counter()
            drawn = rows[row:row + count]
            self._draw_bundle_rows(p, key, drawn, zoom)
            if len(drawn) >= self.BUNDLE_BATCH // 16:  # a running estimate of a bundle's cost
                self._b_row_ms = (self._b_row_ms + (time.perf_counter() - t) * 1000 / len(drawn)) / 2
            batches += 1
            row += count
            if row >= len(rows):
                pen, row = pen + 1, 0
        p.end()
        if pen < len(pens):
            job[3:] = pen, row
            return None
        del self._b_jobs[octave]
        self._bundle_images[octave] = (picture, bounds)
        return picture, bounds

    def _paint_bundles(self, painter: QPainter, bundles: list[Bundle], exposed: QRectF,
                       start: float) -> None:
        """The bundles from a picture of them at the view's zoom octave (drawn once per octave and
        change, so a pan only copies pixels), the moving ones over it, then the counts of the
        long ones in screen pixels. A picture not done yet is drawn a few batches a frame while
        one of another octave, or from before the last change, stands in (scaled; the bundles it
        left out drawn on top), else the part drawn so far. Where the picture would be too
        large, the bundles crossing ``exposed`` are drawn directly."""
        scale = painter.worldTransform().m11()
        octave = self._bundle_octave(scale)
        on_top = self._b_moving
        self._b_pending = False
        self._pending = QRectF()  # no tile is in view: none is still to be drawn
        if octave is None:
            self._draw_bundles(painter, np.flatnonzero(_meeting(self._b_ends, exposed)), scale)
            on_top = np.zeros(0, dtype=bool)
        else:
            stand_in = None
            if octave not in self._bundle_images:
                if self._bundle_images:
                    near = min(self._bundle_images, key=lambda k: (abs(k - octave), -k))
                    stand_in = (*self._bundle_images[near], self._b_moving)
                elif self._b_stale:
                    image, rect, left_out = max(self._b_stale, key=lambda s: s[0].width())
                    stand_in = (image, rect, left_out | self._b_moving)
            picture = self._bundle_picture(octave, start)
            painter.setRenderHint(QPainter.SmoothPixmapTransform, True)
            if picture is not None:
                self._b_stale.clear()
                painter.drawImage(picture[1], picture[0])
            else:
                if stand_in is None:  # the part drawn so far (a new document's first frames)
                    job = self._b_jobs[octave]
                    stand_in = (job[0], job[1], self._b_moving)
                painter.drawImage(stand_in[1], stand_in[0])
                on_top = stand_in[2]
                self._b_pending = True
                self._refine.start(0)
        if on_top.any():
            painter.setRenderHint(QPainter.Antialiasing, True)
            self._draw_bundles(painter, np.flatnonzero(on_top), scale)
        self._bundle_labels(painter)

    def _draw_bundles(self, painter: QPainter, rows: np.ndarray, scale: float) -> None:
        """The bundles of ``rows``, a batch per pen (thin to thick)."""
        chosen = np.zeros(len(self._b_ends), dtype=bool)
        chosen[rows] = True
        for key, pen_rows in self._b_pens:
            self._draw_bundle_rows(painter, key, pen_rows[chosen[pen_rows]], scale)

    def _draw_bundle_rows(self, painter: QPainter, key: tuple, rows: np.ndarray, scale: float) -> None:
        """Bundles ``rows`` of one pen ``key`` (width px, style); pen widths are screen pixels at
        ``scale`` (the painter's zoom). A bundle whose ends meet is not drawn."""
        xy = self._b_ends[rows]
        xy = xy[(xy[:, 0] != xy[:, 2]) | (xy[:, 1] != xy[:, 3])]
        if not len(xy):
            return
        width, style = key
        pen = QPen(self.pen(style))
        if pen.isCosmetic():
            pen.setWidthF(width)
        else:  # a scene-unit pen: as wide on screen as a cosmetic one of ``width`` px
            pen.setWidthF(width / max(scale, 1e-9))
        if width <= 1.0 and not isinstance(style, int):  # single cables recede behind bundles
            pen.setColor(pen.color().lighter(150))
        painter.setPen(pen)
        draw_segments(painter, xy)
        self.bundles_drawn += len(xy)

    def _bundle_labels(self, painter: QPainter) -> None:
        """The counts of the bundles whose line is long on screen, in screen pixels."""
        transform = painter.worldTransform()
        many = np.flatnonzero(self._b_counts >= 2)
        if not len(many):
            return
        ends, counts = self._b_ends[many], self._b_counts[many]
        if transform.isAffine() and not transform.isRotating() and transform.m11() == transform.m22():
            z = transform.m11()  # a uniform zoom: lengths scale, no mapping of every end needed
            pick = np.flatnonzero(np.hypot(ends[:, 2] - ends[:, 0], ends[:, 3] - ends[:, 1]) * abs(z)
                                  >= LABEL_MIN_PX)
        else:
            pick = np.arange(len(ends))
        if len(pick) > MAX_LABELS:
            return
        long = []
        for i in pick.tolist():
            p1 = transform.map(QPointF(ends[i, 0], ends[i, 1]))
            p2 = transform.map(QPointF(ends[i, 2], ends[i, 3]))
            if QLineF(p1, p2).length() >= LABEL_MIN_PX:
                long.append(((p1 + p2) / 2, int(counts[i])))
        if not long:
            return
        painter.save()
        painter.resetTransform()
        font = painter.font()
        font.setPointSizeF(7.5)
        painter.setFont(font)
        metrics = painter.fontMetrics()
        painter.setPen(QColor("#1f2328"))
        for mid, count in long:
            text = f"{count}"
            box = QRectF(0, 0, metrics.horizontalAdvance(text) + 6, metrics.height())
            box.moveCenter(mid)
            painter.fillRect(box, QColor(255, 255, 255, 220))
            painter.drawText(box, Qt.AlignCenter, text)
        painter.restore()

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        start = time.perf_counter()  # far out, the budget counts an edit's bookkeeping too
        self._sync()
        if not len(self._xy):
            return
        transform = painter.worldTransform()
        lod = option.levelOfDetailFromTransform(transform)
        on_screen = widget is not None
        bundles = self.bundles() if on_screen and lod < self.CACHE_LOD else None
        level = self._level(lod) if on_screen and lod < self.CACHE_LOD and bundles is None else None
        self._far_shown = level is not None
        self.bundled = bundles is not None
        if bundles is None:  # no bundle in view is still to be drawn (a zoom in before the
            self._b_pending = False  # bundle picture was done would else be "refining" for ever)
        if bundles is not None:
            self._paint_bundles(painter, bundles, option.exposedRect, start)
        elif level is not None:
            self._far(painter, level, start)
        elif (on_screen and transform.isAffine() and not transform.isRotating()
              and transform.m11() == transform.m22() > 0):
            device = painter.device()
            self._paint_tiles(painter, option.exposedRect,
                              painter.testRenderHint(QPainter.Antialiasing),
                              QRectF(0, 0, device.width(), device.height()))
        else:  # an export, a printer: every cable that crosses the area, with the painter's hints
            self._draw(painter, self.crossing_rows(option.exposedRect))
        for cable in self.special():
            if cable.marked:
                painter.setPen(_cosmetic(BOTTLENECK, 7.0))
                painter.drawLine(cable.line)
            if cable.lid in self.selected:
                painter.setPen(_cosmetic(SELECT, 2.5))
            elif cable.problems:
                painter.setPen(_cosmetic(SEVERITY_COLOR["error"], 1.5))
            else:
                painter.setPen(self.pen(cable.style()))
            painter.drawLine(cable.line)


def _lines_from_array() -> bool:
    """Whether a QLineF is four doubles x1, y1, x2, y2 in memory (Qt's qreal is double on every
    desktop build; a build with another coordinate type gets QLineF objects instead)."""
    probe = np.array([[1.5, 2.5, 3.5, 4.5]])
    line = shiboken6.wrapInstance(probe.ctypes.data, QLineF)
    return (line.x1(), line.y1(), line.x2(), line.y2()) == (1.5, 2.5, 3.5, 4.5)


LINES_FROM_ARRAY = _lines_from_array()


def draw_segments(painter: QPainter, xy: np.ndarray) -> None:
    """``painter.drawLines`` of the segments ``xy`` (rows x1, y1, x2, y2) without a QLineF per
    segment: a C-contiguous float64 array of them is a QLineF array, which Qt's
    ``drawLines(const QLineF *, int)`` reads directly. A list of QLineFs goes to the same call
    once the binding has copied it into such an array: the same pixels, without making and
    reading back hundreds of thousands of objects."""
    if not len(xy):
        return
    if not LINES_FROM_ARRAY:
        painter.drawLines([QLineF(*row) for row in xy.tolist()])
        return
    rows = np.ascontiguousarray(xy, dtype=np.float64)  # kept alive until Qt has drawn them
    painter.drawLines(shiboken6.wrapInstance(rows.ctypes.data, QLineF), len(rows))


def _meeting(xy: np.ndarray, rect: QRectF) -> np.ndarray:
    """Which segments (rows x1, y1, x2, y2) meet ``rect`` (edges in): no axis separates them
    (x, y, or the segment's normal: all four corners strictly on one side of its line), the
    separating axis theorem for convex shapes."""
    left, right, top, bottom = rect.left(), rect.right(), rect.top(), rect.bottom()
    x1, y1, x2, y2 = xy.T
    boxes = ((np.maximum(x1, x2) >= left) & (np.minimum(x1, x2) <= right)
             & (np.maximum(y1, y2) >= top) & (np.minimum(y1, y2) <= bottom))
    dx, dy = x2 - x1, y2 - y1
    side = np.stack([dx * (cy - y1) - dy * (cx - x1)
                     for cx, cy in ((left, top), (right, top), (left, bottom), (right, bottom))])
    return boxes & (side.min(axis=0) <= 0) & (side.max(axis=0) >= 0)


def _pixels(rect: QRectF) -> QRegion:
    """The pixels whose centre lies in ``rect`` (device): neighbouring tiles, scaled to
    fractional edges, share theirs and leave no seam between them."""
    left, top = round(rect.left()), round(rect.top())
    return QRegion(left, top, max(0, round(rect.right()) - left),
                   max(0, round(rect.bottom()) - top))


def _area(region: QRegion) -> int:
    return sum(r.width() * r.height() for r in region)
