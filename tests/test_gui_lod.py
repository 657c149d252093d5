"""How the canvas draws cables at each level of detail: only the cables that meet the view,
from tiles on screen (kept while panning, scaled during a run of zoom steps, drawn a few a frame
at a new zoom with the old ones standing in, redrawn after an edit), with the overlay, selection
and problem colours at every zoom."""

import random
import time
import types

import numpy as np
import pytest
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QTransform
from PySide6.QtWidgets import QApplication, QStyleOptionGraphicsItem, QWidget

from designer.gui.cables import Cable, CableLayer
from designer.gui.items import MEDIUM_COLOR, SELECT, SEVERITY_COLOR, UTIL_COLORS
from designer.gui.testing import open_window
from designer.topology.design import Design
from designer.topology.model import Component, Link, Topology
from designer.topology.validation import Problem

#: far out (the layer's picture, drawn at its own scale), aliased tiles, antialiased tiles, zoomed in
ZOOMS = (0.25, 0.5, 1.0, 2.0)


#: settings in a folder of its own; a window closed with changes discards them (conftest)
pytestmark = pytest.mark.usefixtures("gui_settings")


# ------------------------------------------------------------------ culling
def _layer(lines: dict[str, QLineF], util: dict[str, float] | None = None) -> CableLayer:
    cables = {}
    for lid, line in lines.items():
        cables[lid] = Cable(Link(lid, "a", "b"))
        cables[lid].line = line
        cables[lid].util = (util or {}).get(lid)
    return CableLayer(cables)


def _meets(line: QLineF, rect: QRectF) -> bool:
    """Independent answer: an end inside, or a crossing with one of the four edges."""
    if rect.contains(line.p1()) or rect.contains(line.p2()):
        return True
    corners = [rect.topLeft(), rect.topRight(), rect.bottomRight(), rect.bottomLeft()]
    return any(line.intersects(QLineF(corners[k], corners[(k + 1) % 4]))[0] == QLineF.BoundedIntersection
               for k in range(4))


def test_culling_keeps_exactly_the_cables_that_meet_the_view(qapp):
    view = QRectF(100, 100, 200, 100)
    lines = {
        "inside": QLineF(150, 120, 250, 180),
        "through": QLineF(0, 150, 400, 150),            # both ends outside
        "corner-miss": QLineF(250, 0, 400, 140),        # its box overlaps the view, it does not
        "corner-cut": QLineF(250, 50, 350, 150),        # clips the top-right corner
        "edge-touch": QLineF(300, 120, 380, 40),        # starts on the right edge
        "far": QLineF(1000, 1000, 1200, 900),
        "point-in": QLineF(200, 150, 200, 150),
        "point-out": QLineF(50, 50, 50, 50),
    }
    layer = _layer(lines)
    assert set(layer.cables_crossing(view)) == {"inside", "through", "corner-cut", "edge-touch",
                                                "point-in"}
    rng = random.Random(5)
    many = {f"l{n}": QLineF(*(rng.uniform(-300, 700) for _ in range(4))) for n in range(400)}
    layer = _layer(many)
    for rect in (view, QRectF(-50, 300, 30, 400), QRectF(0, 0, 1, 1)):
        assert set(layer.cables_crossing(rect)) == {lid for lid, ln in many.items() if _meets(ln, rect)}


def _paint(layer: CableLayer, transform: QTransform, aa: bool, widget) -> np.ndarray:
    """The layer painted alone on a 600 x 400 image (on screen: ``widget`` not None)."""
    image = QImage(600, 400, QImage.Format_ARGB32_Premultiplied)
    image.fill(Qt.transparent)
    painter = QPainter(image)
    painter.setClipRect(image.rect())
    painter.setRenderHint(QPainter.Antialiasing, aa)
    painter.setWorldTransform(transform)
    option = QStyleOptionGraphicsItem()
    option.exposedRect = transform.inverted()[0].mapRect(QRectF(image.rect()))
    layer.paint(painter, option, widget)
    painter.end()
    return np.frombuffer(image.constBits(), np.uint8).reshape(400, 600, 4).astype(int)


def test_tiles_hold_the_pixels_of_a_direct_drawing(qapp):
    size = CableLayer.TILE_PX
    lines = {  # along and beside tile edges (of the unpanned 1:1 grid), thin and up to 4 px wide
        "along": QLineF(-40, size - 1, 700, size - 1),
        "beside": QLineF(size + 1.5, -30, size + 1.5, 500),
        "across": QLineF(-20, 380, 640, 10),
        "steep": QLineF(100, -50, 180, 450),
        "thin": QLineF(0, 20, 590, 300),
    }
    util = {"along": 1.0, "beside": 0.9, "across": 0.5}
    screen = QWidget()
    # a view pans by whole pixels; a fraction of a pixel in its translation is rendered into the
    # tiles, where Qt rounds a line's start a little differently (a line here or there one
    # pixel off): a share of pixels that differ, not a count
    for transform, share in ((QTransform(), 0.005), (QTransform(0.75, 0, 0, 0.75, 10, -3), 0.005),
                             (QTransform(1.5, 0, 0, 1.5, -200, -100), 0.005),
                             (QTransform(0.75, 0, 0, 0.75, 10.5, -3.25), 0.08)):
        for aa in (False, True):
            layer = _layer(lines, util)
            direct = _paint(layer, transform, aa, None)
            tiled = _paint(layer, transform, aa, screen)
            assert layer.tiles_rendered > 1
            inked = (direct[..., 3] > 0).sum()
            off = (np.abs(direct - tiled).max(axis=2) > 64).sum()
            assert inked > 1000 and off <= share * inked, (aa, transform, off, inked)


def _ink(image: np.ndarray) -> np.ndarray:
    return image[..., 3] > 64


def _dilate(mask: np.ndarray, reach: int) -> np.ndarray:
    """``mask`` grown by ``reach`` pixels in every direction."""
    h, w = mask.shape
    padded = np.pad(mask, reach)
    out = np.zeros_like(mask)
    for dy in range(2 * reach + 1):
        for dx in range(2 * reach + 1):
            out |= padded[dy:dy + h, dx:dx + w]
    return out


@pytest.mark.parametrize("step", [1.25, 0.6])
def test_a_new_zoom_is_drawn_a_tile_a_frame_without_gaps_and_ends_as_a_direct_drawing(
        qapp, monkeypatch, step):
    monkeypatch.setattr(CableLayer, "BUDGET_MS", 0.0)  # the least progress: one tile a frame
    rng = random.Random(7)
    lines = {f"l{n}": QLineF(*(rng.uniform(-100, 700) for _ in range(4))) for n in range(150)}
    layer = _layer(lines, {lid: rng.random() for lid in lines})  # pens 1 to 4 px
    screen = QWidget()
    _paint(layer, QTransform(), True, screen)  # the zoom left: every tile at once (none to stand in)
    assert not layer.refining
    # one step about the image's centre (300, 200); out, the old tiles leave strips along the
    # edges uncovered: on the left and top whole new tiles (drawn at once), on the right and
    # bottom 19 and 13 px of tiles the old ones cover otherwise (drawn directly till their turn)
    zoom = QTransform(step, 0, 0, step, 300 * (1 - step), 200 * (1 - step))
    direct = _paint(layer, zoom, True, None)
    inked = _ink(direct)
    near = _dilate(inked, 3)
    layer.settle()  # a pause: the step is no part of a run
    frames, drawn = [], []
    while not frames or layer.refining:
        before = layer.tiles_rendered
        frames.append(_paint(layer, zoom, True, screen))
        drawn.append(layer.tiles_rendered - before)
        assert len(frames) < 40
    assert len(frames) >= 4 and max(drawn[1:]) == 1  # then a tile a frame
    assert drawn[0] < sum(drawn)  # not all at once
    if step > 1:
        assert drawn[0] == 1
    for n, frame in enumerate(frames):
        assert not (_ink(frame) & ~near).any(), n  # no cable where none is
        # and none missing: no blank block (the old tiles scaled by 0.6 keep about 0.6 of a
        # line's ink, and a wide line's edge can move out of a block by a pixel or two)
        for y in range(0, 400, 20):
            for x in range(0, 600, 20):
                want = direct[y:y + 20, x:x + 20, 3].sum()
                got = frame[max(0, y - 3):y + 23, max(0, x - 3):x + 23, 3].sum()
                assert got >= 0.3 * want, (n, x, y)
    first = np.abs(direct - frames[0]).max(axis=2) > 64
    assert first.sum() > 0.05 * inked.sum()  # the first frame is mostly the old tiles, scaled
    if step > 1:  # nothing uncovered: the tile nearest the centre comes first, sharp
        assert first[20:190, 200:420].sum() <= 0.005 * inked[20:190, 200:420].sum()
    # the end: the picture of all tiles drawn at once, and of a direct drawing (but for thin
    # antialiased lines that Qt clips at a tile's edge in fixed point and so shifts by a fraction
    # of a pixel: 1 to 2 % of the inked pixels of these 150 crossing lines, as before progress)
    fresh = _layer(lines, {lid: c.util for lid, c in layer.cables.items()})
    at_once = _paint(fresh, zoom, True, screen)
    assert np.array_equal(frames[-1], at_once)
    off = (np.abs(direct - frames[-1]).max(axis=2) > 64).sum()
    assert off <= 0.03 * inked.sum()


# ------------------------------------------------------------- on screen
def _design() -> Design:
    """Four switches at the corners of a 1200 x 900 square: two diagonal cables, one vertical."""
    topo = Topology()
    for i, (x, y) in enumerate([(0, 0), (1200, 0), (0, 900), (1200, 900)], 1):
        topo.add_component(Component(f"sw-{i}", "switch", "qm9700", props={"tier": "leaf"}, pos=(x, y)))
    topo.add_link(Link("link-1", "sw-1", "sw-4", "infiniband", speed_Gbps=400.0))
    topo.add_link(Link("link-2", "sw-2", "sw-3", "infiniband", speed_Gbps=400.0))
    topo.add_link(Link("link-3", "sw-1", "sw-3", "infiniband", speed_Gbps=400.0))
    return Design(topo, "lod")


BACKGROUND = np.array([0xfb, 0xfb, 0xfc])


def _cover(pixel: QColor, want: QColor) -> float:
    """How much of colour ``want`` over the background a pixel shows (0..1; 0 for another
    colour): an antialiased 1 px line on a pixel edge covers two pixels by half."""
    c, w = np.array(pixel.getRgb()[:3]), np.array(want.getRgb()[:3])
    d = w - BACKGROUND
    a = float(np.dot(c - BACKGROUND, d) / np.dot(d, d))
    return a if np.abs(BACKGROUND + a * d - c).max() <= 30 else 0.0


def _shown(view, at: QPointF, want: QColor, cover: float = 0.4) -> bool:
    """Whether the viewport shows ``want`` at scene point ``at`` (or a pixel beside it)."""
    image = view.viewport().grab().toImage()
    p = view.mapFromScene(at)
    return any(_cover(image.pixelColor(p.x() + dx, p.y() + dy), want) >= cover
               for dx in (-1, 0, 1) for dy in (-1, 0, 1))


def _on(w, lid: str, t: float = 0.3) -> QPointF:
    """A point on a cable, away from every box and from the other cables."""
    point = w.scene.link_items[lid].line.pointAt(t)
    assert w.scene.component_at(point) is None
    return point


def _at_zoom(w, zoom: float, center: QPointF, sharp: bool = False) -> None:
    w.view.zoom_reset()
    w.view.zoom(zoom)
    w.view.centerOn(center)
    w.scene.cables.settle()  # as after a pause: drawn sharp at this zoom
    for _ in range(100 if sharp else 0):  # a busy machine can need more than a frame for them
        w.view.viewport().grab()
        if not w.scene.cables.refining:
            break


def _fire(timer, interval_ms: int) -> None:
    """What Qt does when the single-shot ``timer`` (armed for ``interval_ms``) runs out, done now:
    the tests drive the layer's timers themselves instead of waiting real time for them."""
    assert timer.isActive() and timer.interval() == interval_ms
    timer.stop()
    timer.timeout.emit()


def _frames_until_sharp(view, cables, limit: int = 100) -> int:
    """Repaint until the layer has no tile left to draw; the number of frames it took (each
    draws at least one tile, so the limit is never the reason to stop)."""
    for n in range(1, limit + 1):
        view.viewport().repaint()
        if not cables.refining:
            return n
    raise AssertionError(f"still refining after {limit} frames")


@pytest.fixture
def window(qtbot):
    w = open_window(qtbot, _design())
    yield w
    w.editor.stack.clear()


def test_cable_medium_overlay_selection_and_problem_colours_at_every_zoom(window):
    w = window
    points = {lid: _on(w, lid) for lid in ("link-1", "link-2", "link-3")}
    for zoom in ZOOMS:
        for lid, at in points.items():
            _at_zoom(w, zoom, at, sharp=True)
            assert _shown(w.view, at, MEDIUM_COLOR["infiniband"]), (zoom, lid)
    w.scene.show_utilization({"link-1": 1.0, "link-2": 0.0, "link-3": 0.5}, marked=set())
    shades = {"link-1": UTIL_COLORS[-1], "link-2": UTIL_COLORS[0], "link-3": UTIL_COLORS[4]}
    for zoom in ZOOMS:
        for lid, want in shades.items():
            _at_zoom(w, zoom, points[lid], sharp=True)
            assert _shown(w.view, points[lid], want), (zoom, lid)
            assert not _shown(w.view, points[lid], MEDIUM_COLOR["infiniband"]), (zoom, lid)
    w.scene.show_utilization(None)
    w.scene.set_selected_links({"link-1"})
    w.scene.set_problems([Problem("error", "test", "a bad cable", link="link-2")])
    for zoom in ZOOMS:
        _at_zoom(w, zoom, points["link-1"], sharp=True)
        assert _shown(w.view, points["link-1"], SELECT), zoom
        _at_zoom(w, zoom, points["link-2"], sharp=True)
        assert _shown(w.view, points["link-2"], SEVERITY_COLOR["error"]), zoom
        _at_zoom(w, zoom, points["link-3"], sharp=True)
        assert _shown(w.view, points["link-3"], MEDIUM_COLOR["infiniband"]), zoom


def test_panning_keeps_the_tiles_and_each_cable_in_place(window, monkeypatch):
    # every tile a frame needs is drawn in that frame, however busy the machine: the counts
    # compare whole frames (the per-frame budget is tested with BUDGET_MS = 0 below)
    monkeypatch.setattr(CableLayer, "BUDGET_MS", 1e9)
    w = window
    cables = w.scene.cables
    at = _on(w, "link-1", 0.5)
    _at_zoom(w, 0.8, at)
    w.view.viewport().repaint()
    _at_zoom(w, 1.0, at)
    before = cables.tiles_rendered
    w.view.viewport().repaint()
    full = cables.tiles_rendered - before   # a new zoom: every tile in view
    assert full > 0
    for dx, dy in ((37, 0), (0, 23), (-101, -64)):
        before = cables.tiles_rendered
        bar_x, bar_y = w.view.horizontalScrollBar(), w.view.verticalScrollBar()
        bar_x.setValue(bar_x.value() + dx)
        bar_y.setValue(bar_y.value() + dy)
        w.view.viewport().repaint()
        assert cables.tiles_rendered - before < full  # only what the pan uncovered
        for t in (0.3, 0.5, 0.7):
            point = _on(w, "link-1", t)
            if w.view.viewport().rect().adjusted(2, 2, -2, -2).contains(w.view.mapFromScene(point)):
                assert _shown(w.view, point, MEDIUM_COLOR["infiniband"]), (dx, dy, t)


def test_an_edit_redraws_the_cables_it_moved(window):
    w = window
    old = _on(w, "link-3", 0.5)           # the vertical cable, x = 0
    _at_zoom(w, 0.5, old, sharp=True)     # not the old zoom's tiles scaled (a busy machine's frame)
    assert _shown(w.view, old, MEDIUM_COLOR["infiniband"])
    w.editor.move({"sw-1": (300.0, 0.0), "sw-3": (300.0, 900.0)})
    new = _on(w, "link-3", 0.5)
    assert new.x() > old.x() + 200
    w.view.viewport().repaint()
    assert not _shown(w.view, old, MEDIUM_COLOR["infiniband"])
    assert _shown(w.view, new, MEDIUM_COLOR["infiniband"])


def test_a_run_of_zoom_steps_scales_the_tiles_then_draws_them_anew(window, monkeypatch):
    monkeypatch.setattr(CableLayer, "SETTLE_MS", 600)
    # the layer's clock stands still during the steps: they are a run however long a frame takes
    # on a busy machine; the timer that settles the zoom afterwards is fired by the test (no
    # event loop runs meanwhile, so Qt does not fire it either)
    import designer.gui.cables as cables_module

    clock = types.SimpleNamespace(monotonic=lambda: 1000.0, perf_counter=time.perf_counter)
    monkeypatch.setattr(cables_module, "time", clock)
    w = window
    cables = w.scene.cables
    w.scene.show_utilization({lid: 1.0 for lid in w.scene.link_items}, marked=set())  # 4 px lines
    at = _on(w, "link-2", 0.4)
    _at_zoom(w, 1.0, at, sharp=True)  # every tile in view drawn (a busy frame leaves some to draw)
    w.view.viewport().repaint()
    before = cables.tiles_rendered
    for _ in range(2):                     # zoom steps right after a frame: a wheel turning
        w.view.zoom(1.25, QPointF(w.view.mapFromScene(at)))
        w.view.viewport().repaint()
        assert cables.tiles_rendered == before  # scaled, not drawn anew
        assert _shown(w.view, at, UTIL_COLORS[-1])
    # the zoom rests: SETTLE_MS after the last step the layer draws the tiles anew (a tile or
    # more a frame: however many frames a busy machine needs)
    _fire(cables._settle, 600)
    assert cables.tiles_rendered == before
    _frames_until_sharp(w.view, cables)
    assert cables.tiles_rendered > before
    for t in (0.3, 0.4, 0.5):
        point = _on(w, "link-2", t)
        if w.view.viewport().rect().adjusted(2, 2, -2, -2).contains(w.view.mapFromScene(point)):
            assert _shown(w.view, point, UTIL_COLORS[-1]), t


def test_one_zoom_step_after_a_pause_shows_the_old_tiles_then_refines_by_itself(qtbot, window,
                                                                                monkeypatch):
    monkeypatch.setattr(CableLayer, "BUDGET_MS", 0.0)  # one tile a frame
    w = window
    cables = w.scene.cables
    w.scene.show_utilization({lid: 1.0 for lid in w.scene.link_items}, marked=set())
    at = _on(w, "link-2", 0.4)
    _at_zoom(w, 1.0, at)
    for _ in range(50):  # a jump to this zoom: drawn a tile a frame too
        w.view.viewport().repaint()
        if not cables.refining:
            break
    assert not cables.refining
    cables.settle()  # a pause
    w.view.zoom(1.25, QPointF(w.view.mapFromScene(at)))
    w.view.viewport().repaint()
    assert cables.refining  # tiles left to draw, the old ones stand in
    assert _shown(w.view, at, UTIL_COLORS[-1])
    # no repaint asked for here: the layer asks Qt for its next frames itself (a 0 ms timer,
    # then an update of the area still to draw); each pass of the event loop is a frame
    for passes in range(1, 200):
        QApplication.processEvents()
        if not cables.refining:
            break
    assert not cables.refining and passes > 1
    for t in (0.3, 0.4, 0.5):
        point = _on(w, "link-2", t)
        if w.view.viewport().rect().adjusted(2, 2, -2, -2).contains(w.view.mapFromScene(point)):
            assert _shown(w.view, point, UTIL_COLORS[-1]), t


def _lines(n: int, seed: int) -> dict[str, QLineF]:
    rng = random.Random(seed)
    return {f"l{k}": QLineF(*(rng.uniform(-100, 700) for _ in range(4))) for k in range(n)}


def test_an_edit_redraws_only_the_tiles_its_cables_meet_and_ends_as_drawn_at_once(qapp):
    lines = _lines(150, 11)
    lines["moved"] = QLineF(20, 20, 90, 60)       # in the top-left tile, moved within it
    util = {lid: n % 9 / 8 for n, lid in enumerate(lines)}  # pens 1 to 4 px
    layer = _layer(lines, util)
    screen = QWidget()
    _paint(layer, QTransform(), True, screen)
    assert not layer.refining
    size = CableLayer.TILE_PX
    in_view = [(i, j) for i in range(3) for j in range(2)]  # 600 x 400 at 1:1
    old = QLineF(layer.cables["moved"].line)
    layer.cables["moved"].line = new = QLineF(30, 40, 120, 30)
    layer.changed()
    before = layer.tiles_rendered
    edited = _paint(layer, QTransform(), True, screen)
    # the tiles that either segment meets, with room for the widest pen: here only the first
    meets = [(i, j) for i, j in in_view
             if any(_meets(ln, QRectF(i * size - 4, j * size - 4, size + 8, size + 8)) for ln in (old, new))]
    assert meets == [(0, 0)]
    assert layer.tiles_rendered - before == len(meets)
    assert not layer.refining  # an edit is right in the frame that follows it
    fresh = _layer({lid: c.line for lid, c in layer.cables.items()}, util)
    assert np.array_equal(edited, _paint(fresh, QTransform(), True, screen))
    # a restyle of most cables (the overlay): drawn anew (the old tiles stand in meanwhile)
    for n, cable in enumerate(layer.cables.values()):
        cable.util = (n + 4) % 9 / 8
    layer.changed()
    frames = [_paint(layer, QTransform(), True, screen)]
    while layer.refining:
        frames.append(_paint(layer, QTransform(), True, screen))
        assert len(frames) < 20
    fresh = _layer({lid: c.line for lid, c in layer.cables.items()},
                   {lid: c.util for lid, c in layer.cables.items()})
    assert np.array_equal(frames[-1], _paint(fresh, QTransform(), True, screen))


def _until_done(layer: CableLayer, transform: QTransform, screen) -> tuple[list, list]:
    """Frames until the layer has nothing left to draw, and the tiles each one drew."""
    frames, drawn = [], []
    while not frames or layer.refining:
        before = layer.tiles_rendered
        frames.append(_paint(layer, transform, True, screen))
        drawn.append(layer.tiles_rendered - before)
        assert len(frames) < 60
    return frames, drawn


def test_a_jump_in_zoom_is_drawn_a_tile_a_frame_and_ends_as_drawn_at_once(qapp, monkeypatch):
    monkeypatch.setattr(CableLayer, "BUDGET_MS", 0.0)  # the least progress: one tile a frame
    lines = _lines(150, 13)
    util = {lid: n % 9 / 8 for n, lid in enumerate(lines)}
    layer = _layer(lines, util)
    screen = QWidget()
    _until_done(layer, QTransform(0.25, 0, 0, 0.25, 150, 100), screen)   # far out: a picture
    # 6x in (fit to actual size), then 3.75x out: the picture far out, scaled, stands in
    for zoom in (1.5, 0.4):
        transform = QTransform(zoom, 0, 0, zoom, 300 * (1 - zoom), 200 * (1 - zoom))
        layer.settle()
        frames, drawn = _until_done(layer, transform, screen)
        assert len(frames) >= 4 and max(drawn) == 1, drawn
        direct = _paint(layer, transform, True, None)
        for n, frame in enumerate(frames):  # no blank block: the picture scaled is a blur of them
            for y in range(0, 400, 40):
                for x in range(0, 600, 40):
                    if direct[y:y + 40, x:x + 40, 3].sum() > 40 * 255:
                        assert frame[max(0, y - 4):y + 44, max(0, x - 4):x + 44, 3].sum() > 0, (n, x, y)
        fresh = _layer(lines, util)
        assert np.array_equal(frames[-1], _paint(fresh, transform, True, screen))


def test_the_picture_far_out_is_drawn_in_batches_and_ends_as_drawn_at_once(qapp, monkeypatch):
    lines = _lines(150, 17)
    util = {lid: n % 9 / 8 for n, lid in enumerate(lines)}
    far = QTransform(0.25, 0, 0, 0.25, 150, 100)
    screen = QWidget()
    monkeypatch.setattr(CableLayer, "BUDGET_MS", 1000.0)  # at once even on a busy machine
    at_once = _paint(_layer(lines, util), far, True, screen)
    monkeypatch.setattr(CableLayer, "BUDGET_MS", 0.0)
    monkeypatch.setattr(CableLayer, "BATCH", 8)
    layer = _layer(lines, util)
    frames = []
    while not frames or layer.refining:
        before = layer.batches_drawn
        frames.append(_paint(layer, far, True, screen))
        assert layer.batches_drawn - before == 1  # one batch a frame
        assert len(frames) < 60
    assert len(frames) >= 150 // 8
    assert np.array_equal(frames[-1], at_once)
    assert _ink(frames[len(frames) // 2]).sum() < _ink(at_once).sum()  # the part drawn so far
    # an edit while far out: right in the next frame (a box dragged shows its cables follow,
    # drawn over the picture of the others, which is small enough here to draw anew at once;
    # "small enough" compares the measured batch cost with AT_ONCE_MS: lifted so that a busy
    # machine's slow batches do not decide it)
    monkeypatch.setattr(CableLayer, "AT_ONCE_MS", 1e9)
    old = QLineF(layer.cables["l0"].line)
    layer.cables["l0"].line = QLineF(0, 0, 600, 400)
    layer.changed()
    edited = _paint(layer, far, True, screen)
    assert not layer.refining
    moved = {lid: c.line for lid, c in layer.cables.items()}
    monkeypatch.setattr(CableLayer, "BUDGET_MS", 1000.0)
    fresh = _paint(_layer(moved, util), far, True, screen)
    near = _near(moved, {"l0"}, util, far)
    assert not near[_ink(_paint(_layer({"l0": old}, util), far, True, None))].all()
    assert np.array_equal(edited[~near], fresh[~near])  # no trace of it where it was
    # once the edits stop, the picture takes it back: as a picture drawn at once
    layer.fold()
    frames, _ = _until_done(layer, far, screen)
    assert np.array_equal(frames[-1], fresh)


def _near(lines: dict[str, QLineF], lids: set[str], util: dict, transform: QTransform) -> np.ndarray:
    """The pixels within 3 of the cables ``lids`` drawn directly (where a cable drawn over the
    picture of the others may differ from one drawn into it)."""
    alone = _layer({lid: lines[lid] for lid in lids}, util)
    return _dilate(_ink(_paint(alone, transform, True, None)), 3)


def test_a_drag_far_out_redraws_no_picture_per_move_and_ends_as_drawn_at_once(qapp, monkeypatch):
    lines = _lines(150, 19)
    hub = QPointF(300, 200)  # a switch and its cables to six boxes
    for k in range(6):
        lines[f"s{k}"] = QLineF(hub, QPointF(-80 + 150 * k, 650))
    util = {lid: n % 9 / 8 for n, lid in enumerate(lines)}
    far = QTransform(0.25, 0, 0, 0.25, 150, 100)
    screen = QWidget()
    layer = _layer(lines, util)
    _until_done(layer, far, screen)
    monkeypatch.setattr(CableLayer, "BUDGET_MS", 0.0)  # the least progress: one batch a frame
    monkeypatch.setattr(CableLayer, "BATCH", 8)
    monkeypatch.setattr(CableLayer, "AT_ONCE_MS", 0.0)  # as on a big design: no picture at once
    monkeypatch.setattr(CableLayer, "FOLD_MS", 200)
    moving = {f"s{k}" for k in range(6)}
    pictures = 0  # frames that still showed the picture from before the drag
    ready = False
    for step in range(1, 41):
        for k in range(6):
            cable = layer.cables[f"s{k}"]
            cable.line = QLineF(hub + QPointF(5 * step, -3 * step), cable.line.p2())
        layer.changed()
        batches, on_top = layer.batches_drawn, layer.drawn_on_top
        frame = _paint(layer, far, True, screen)
        assert layer.batches_drawn - batches <= 1
        assert layer.drawn_on_top - on_top <= len(moving)
        if layer.refining:  # the picture without the switch's cables is still being drawn
            pictures += 1
            continue
        now = {lid: c.line for lid, c in layer.cables.items()}
        at_once = _layer(now, util)
        at_once.BUDGET_MS = 1000.0  # a fresh picture in one frame
        fresh = _paint(at_once, far, True, screen)
        near = _near(now, moving, util, far)
        assert np.array_equal(frame[~near], fresh[~near]), step  # no ghost
        if ready:  # once the picture without them is done, a move draws nothing into one
            assert layer.batches_drawn == batches
        ready = True
    assert 0 < pictures < 40  # the picture without them took a few frames, then the drag was free
    # the edits stopped: FOLD_MS after the last one the layer takes them back by itself
    _fire(layer._fold, 200)
    frames, _ = _until_done(layer, far, screen)
    monkeypatch.setattr(CableLayer, "BUDGET_MS", 1000.0)
    now = {lid: c.line for lid, c in layer.cables.items()}
    assert np.array_equal(frames[-1], _paint(_layer(now, util), far, True, screen))
