"""The canvas's component boxes far out: one :class:`BoxLayer` draws them all from a picture.

Far out (the view's zoom below ``DETAIL_LOD``) a box is a block of colour
(:meth:`designer.gui.items.ComponentItem.paint_far`), and a 2,048-server design has ~3,800 of
them: painted as items, Qt walks its index and calls each item's ``paint`` every frame (~30 ms a
frame at "zoom to fit", measured with bench/bench_canvas.py). There the items are flagged
``ItemHasNoContents`` (Qt skips them when it paints, still finds them under the mouse) and this
layer draws their plain look (not selected, highlighted or marked) once into a picture at the
view's zoom, which a frame then copies. The boxes that look otherwise or move are drawn on top
with the same ``paint_far``, every frame: the selected, highlighted and marked ones and those
being dragged (``moved``). When the moves stop (:meth:`fold`, ``FOLD_MS`` after the last one, as
the cable layer folds its moving cables back) and after an edit of a box (:meth:`touched`) the
picture is drawn anew only where the boxes were and are (:meth:`_patch`).

Closer in (and in an export, :meth:`designer.gui.scene.DesignScene.render`) the items paint
themselves as before.
"""

from __future__ import annotations

import math

import shiboken6
from PySide6.QtCore import QPointF, QRectF, Qt, QTimer
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem

from designer.gui.items import ComponentItem


class BoxLayer(QGraphicsItem):
    """Draws the scene's component boxes far out (see the module doc); ``active`` while the
    view's zoom is below ``DETAIL_LOD`` (:meth:`set_active`, from ``DesignScene.set_detail``)."""

    #: most pixels of a picture (a larger one, at a zoom nearer ``DETAIL_LOD``: the boxes in view
    #: are drawn directly, by the same ``paint_far``)
    MAX_PIXELS = 4096 * 4096
    VIEWS = 2         # a picture has at most this many times the view's pixels (else: direct)
    KEEP = 3          # pictures kept, at the last zooms shown (a zoom step needs a new one)
    FOLD_MS = 1000    # no move for this long: the moved boxes go back into the pictures
    PAD = 2.0         # screen pixels added around a patched region (rounding at the edges)

    def __init__(self, items: dict[str, ComponentItem]) -> None:
        super().__init__()
        self.items = items  # the scene's comp_items (shared, not copied)
        self.active = False
        self._extent = QRectF()
        self.setZValue(-0.5)  # over the cables (-1), where the boxes are
        self.setAcceptedMouseButtons(Qt.NoButton)
        self.setFlag(QGraphicsItem.ItemUsesExtendedStyleOption)
        #: pictures by zoom: (image, scene rect it shows), the newest last
        self._pictures: dict[tuple[float, float, float], tuple[QImage, QRectF]] = {}
        self._drawn: dict[str, QRectF] = {}    # where each box is in the pictures (scene)
        self._live: set[str] = set()           # moved boxes, drawn on top, left out of pictures
        self._styled: set[str] = set()         # highlighted or marked boxes, drawn on top
        self._pending: list[QRectF] = []       # regions (scene) to draw anew in the pictures
        self._fold = QTimer()
        self._fold.setSingleShot(True)
        self._fold.timeout.connect(self.fold)
        # what was drawn, for tests and the bench
        self.pictures_drawn = 0   # whole pictures
        self.patches: list[QRectF] = []  # regions drawn anew (scene), every one since made
        self.drawn_on_top = 0     # boxes drawn over the picture, all frames together

    # ------------------------------------------------------------ state
    def set_active(self, active: bool) -> None:
        """Far out (``active``) the boxes are drawn here, else by their items."""
        if active == self.active:
            return
        self.active = active
        for item in self.items.values():
            item.setFlag(QGraphicsItem.ItemHasNoContents, active)
        self.update()

    def adopt(self, item: ComponentItem) -> None:
        """A new item: flagged as the others are; drawn into the pictures (:meth:`touched`)."""
        if self.active:
            item.setFlag(QGraphicsItem.ItemHasNoContents, True)
        self.touched(item)

    def set_extent(self, rect: QRectF) -> None:
        self.prepareGeometryChange()
        self._extent = QRectF(rect)

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt's name
        return self._extent

    def touched(self, item: ComponentItem) -> None:
        """A box was added, resized or restyled (its colour): drawn anew where it was and is."""
        if not self._pictures:
            self._drawn.pop(item.cid, None)
            return
        self._repaint_where(item.cid, item)

    def removed(self, cid: str) -> None:
        """A box is gone: the pictures drawn anew where it was."""
        self._live.discard(cid)
        self._styled.discard(cid)
        old = self._drawn.pop(cid, None)
        if old is not None and self._pictures:
            self._pending.append(old)
            self.update(old)

    def restyled(self, item: ComponentItem) -> None:
        """Highlighted or marked (or no longer): drawn on top while it is."""
        if item.highlight or item.marked:
            self._styled.add(item.cid)
        else:
            self._styled.discard(item.cid)
        self.update(item.sceneBoundingRect())

    def moved(self, cids) -> None:
        """Boxes being moved (a drag): left out of the pictures (drawn anew where they were, once)
        and drawn on top until the moves stop (:meth:`fold`)."""
        if not self.active:  # closer in the items paint themselves: the pictures follow later
            for cid in cids:
                self._live.discard(cid)
                item = self.items.get(cid)
                if item is not None and self._pictures:
                    self._repaint_where(cid, item)
            return
        for cid in cids:
            item = self.items.get(cid)
            if item is None or not item.isVisible():
                continue
            if cid not in self._live:
                self._live.add(cid)
                old = self._drawn.pop(cid, None)
                if old is not None and self._pictures:
                    self._pending.append(old)
                    self.update(old)
            self.update(item.sceneBoundingRect())
        self._fold.start(self.FOLD_MS)

    def fold(self) -> None:
        """The moved boxes back into the pictures: drawn anew only where they are now."""
        self._fold.stop()
        if not shiboken6.isValid(self):
            return
        live, self._live = self._live, set()
        for cid in live:
            item = self.items.get(cid)
            if item is not None:
                self._repaint_where(cid, item)

    #: more regions than this waiting (many edits closer in): the pictures are drawn anew instead
    MAX_PENDING = 512

    def _repaint_where(self, cid: str, item: ComponentItem) -> None:
        old = self._drawn.pop(cid, None)
        now = item.sceneBoundingRect() if item.isVisible() and cid not in self._live else None
        for rect in (old, now):
            if rect is not None:
                self._pending.append(rect)
                if self.active:
                    self.update(rect)
        if len(self._pending) > self.MAX_PENDING:
            self._pending.clear()
            self._pictures.clear()
            self._drawn.clear()

    # ----------------------------------------------------------- drawing
    def _bounds(self) -> QRectF:
        """Where the boxes are: the scene's content rect (it grows as a box is moved out of it)."""
        scene = self.scene()
        rect = scene.content_rect() if hasattr(scene, "content_rect") else scene.itemsBoundingRect()
        return rect.united(self._beyond).adjusted(-8, -8, 8, 8)

    #: where boxes moved beyond the scene's content rect (it grows only past its margin)
    _beyond = QRectF()

    def _stacked(self) -> list[ComponentItem]:
        """Every visible box, bottom to top: the free-standing ones in the order they were made
        (racks first), then the rack members over them, as Qt stacks a child over its parent."""
        free, members = [], []
        for item in self.items.values():
            if item.isVisible():
                (free if item.parentItem() is None else members).append(item)
        return free + members

    def _boxes_in(self, rect: QRectF) -> list[ComponentItem]:
        """The visible boxes whose bounding rect meets ``rect``, bottom to top as the whole
        picture stacks them (:meth:`_stacked`)."""
        found = [item for item in self.scene().items(rect, Qt.IntersectsItemBoundingRect)
                 if isinstance(item, ComponentItem) and item.isVisible()]
        if len(found) > 1:
            order = {cid: n for n, cid in enumerate(self.items)}
            found.sort(key=lambda item: (item.parentItem() is not None, order.get(item.cid, 0)))
        return found

    @staticmethod
    def _draw_plain(painter: QPainter, item: ComponentItem) -> QRectF:
        """``item`` as the picture holds it, at its scene place; returns its scene bounding rect."""
        origin = item.scenePos()  # items are only ever moved (no scale, no rotation)
        body, outline = item.shape_rects()
        item.paint_far(painter, body.translated(origin), False, False, False)
        return outline.translated(origin)

    @staticmethod
    def _key(transform) -> tuple[float, float, float]:
        """A picture's key: the zoom and the fraction of a pixel the view is shifted by (a pan
        moves by whole pixels and keeps it), so that its pixels are those a direct drawing makes."""
        return (transform.m11(), round(transform.dx() % 1.0, 4), round(transform.dy() % 1.0, 4))

    @staticmethod
    def _painter(image: QImage, key: tuple[float, float, float], bounds: QRectF) -> QPainter:
        scale, fx, fy = key
        p = QPainter(image)
        p.translate(fx, fy)
        p.scale(scale, scale)
        p.translate(-bounds.topLeft())
        return p

    def _picture(self, key: tuple[float, float, float], limit: int | None = None
                 ) -> tuple[QImage, QRectF] | None:
        """The picture at ``key`` (pixels a scene unit, pixel shift), drawn now if there is none;
        None when it would have more than ``limit`` pixels (default ``MAX_PIXELS``)."""
        found = self._pictures.pop(key, None)
        if found is not None:
            self._pictures[key] = found  # the newest last
            return found
        scale = key[0]
        rect = self._bounds()
        # its corner on a whole pixel at this zoom
        left, top = math.floor(rect.left() * scale) / scale, math.floor(rect.top() * scale) / scale
        bounds = QRectF(left, top, rect.right() - left, rect.bottom() - top)
        w, h = math.ceil(bounds.width() * scale) + 2, math.ceil(bounds.height() * scale) + 2
        if w * h > (self.MAX_PIXELS if limit is None else limit) or rect.isEmpty():
            return None
        if self._pending:
            self._patch()  # the other pictures brought up to date first (they share ``_drawn``)
        image = QImage(w, h, QImage.Format_ARGB32_Premultiplied)
        image.fill(Qt.transparent)
        p = self._painter(image, key, bounds)
        live, drawn = self._live, self._drawn
        for item in self._stacked():
            if item.cid not in live:
                drawn[item.cid] = self._draw_plain(p, item)
        p.end()
        self.pictures_drawn += 1
        self._pictures[key] = (image, bounds)
        while len(self._pictures) > self.KEEP:
            del self._pictures[next(iter(self._pictures))]
        return image, bounds

    def _patch(self) -> None:
        """Draw every picture anew in the pending regions: cleared, then the boxes meeting them
        (but the moving ones), clipped to them. A region outside a picture: all drawn anew."""
        regions, self._pending = self._pending, []
        if not self._pictures:
            return
        bounds = next(iter(self._pictures.values()))[1]
        outside = [r for r in regions if not bounds.contains(r)]
        if outside:  # a box moved out of the pictures: drawn anew, larger, when shown
            for r in outside:
                self._beyond = self._beyond.united(r)
            self._pictures.clear()
            self._drawn.clear()
            return
        live, drawn = self._live, self._drawn
        for key, (image, rect) in self._pictures.items():
            p = self._painter(image, key, rect)
            scale = key[0]
            transform = p.transform()
            for region in regions:
                pad = self.PAD / scale
                area = region.adjusted(-pad, -pad, pad, pad)
                # clipped to whole pixels (a fractional clip blends its edges: not the pixels
                # of a picture drawn whole)
                pixels = transform.mapRect(area).toAlignedRect()
                p.resetTransform()
                p.setClipRect(pixels)
                p.setCompositionMode(QPainter.CompositionMode_Clear)
                p.fillRect(pixels, Qt.transparent)
                p.setCompositionMode(QPainter.CompositionMode_SourceOver)
                p.setTransform(transform)
                area = transform.inverted()[0].mapRect(QRectF(pixels))
                for item in self._boxes_in(area):
                    if item.cid not in live:
                        drawn[item.cid] = self._draw_plain(p, item)
            p.end()
        self.patches.extend(regions)

    _last_key: tuple[float, float, float] | None = None
    standing_in = False  #: the last frame showed a scaled picture of another zoom

    def _stand_in(self, key: tuple[float, float, float]) -> tuple[QImage, QRectF] | None:
        """The picture of the zoom nearest ``key``'s (within a factor 2) when there is none at
        ``key`` yet, else None."""
        if key in self._pictures or not self._pictures:
            return None
        near = min(self._pictures, key=lambda k: abs(math.log(k[0] / key[0])))
        if abs(math.log2(near[0] / key[0])) > 1.0:
            return None
        image, bounds = self._pictures[near]
        scale, fx, fy = near  # where its pixels are in the scene
        return image, QRectF(bounds.left() - fx / scale, bounds.top() - fy / scale,
                             image.width() / scale, image.height() / scale)

    def _on_top(self) -> list[ComponentItem]:
        """The boxes drawn over the picture: moving, selected, highlighted or marked; parents
        before their members."""
        chosen = {self.items[cid] for cid in self._live | self._styled if cid in self.items}
        chosen.update(item for item in self.scene().selectedItems() if isinstance(item, ComponentItem))
        for item in list(chosen):  # a rack drawn on top would cover its members in the picture
            chosen.update(child for child in item.childItems() if isinstance(child, ComponentItem))
        return sorted((item for item in chosen if item.isVisible()),
                      key=lambda item: (item.parentItem() is not None, item.zValue()))

    def _draw_item(self, painter: QPainter, item: ComponentItem) -> None:
        origin = item.scenePos()
        item.paint_far(painter, item.shape_rects()[0].translated(origin), item.isSelected(),
                       item.highlight, item.marked)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        if not self.active:
            return
        transform = painter.worldTransform()
        scale = transform.m11()
        uniform = (transform.isAffine() and not transform.isRotating()
                   and scale == transform.m22() > 0)
        if self._pending:  # first: a box moved out of the pictures drops them
            self._patch()
        key = self._key(transform) if uniform else None
        last, self._last_key = self._last_key, key
        exposed = option.exposedRect
        stand_in = self._stand_in(key) if key is not None and key != last else None
        self.standing_in = stand_in is not None
        device = painter.device()
        # a picture pays when the view shows most of it (a pan copies it); nearer, where it would
        # be much larger than the view, the boxes in view are drawn directly (measured on the
        # 2,048-server design at 25 %: a 2,300 x 1,900 picture took ~60 ms to draw, the boxes in
        # a 1,600 x 1,000 view less than Qt's own item painting of them did)
        limit = min(self.MAX_PIXELS, self.VIEWS * device.width() * device.height())
        found = None if key is None or stand_in is not None else self._picture(key, limit)
        if stand_in is not None:
            # a zoom step (a new zoom since the last frame): the picture of the nearest zoom,
            # scaled, stands in; the picture at this zoom is drawn once it rests (a next frame)
            if self._pending:
                self._patch()
            image, bounds = stand_in
            painter.setRenderHint(QPainter.SmoothPixmapTransform, True)
            painter.drawImage(bounds, image)
        elif found is None:  # too large a picture (or a skewed painter): the boxes in view
            live = self._live
            for item in self._boxes_in(exposed):
                if item.cid not in live:
                    self._draw_item(painter, item)
        else:
            if self._pending:
                self._patch()
            image, bounds = found
            # copied pixel for pixel: its corner is on a whole pixel, the view's shift drawn in
            x0 = round(bounds.left() * scale + math.floor(transform.dx()))
            y0 = round(bounds.top() * scale + math.floor(transform.dy()))
            shown = exposed.intersected(bounds)
            if not shown.isEmpty():
                src = QRectF((shown.left() - bounds.left()) * scale, (shown.top() - bounds.top()) * scale,
                             shown.width() * scale, shown.height() * scale).adjusted(-2, -2, 2, 2)
                src = QRectF(src.intersected(QRectF(image.rect())).toAlignedRect())
                painter.save()
                painter.resetTransform()
                painter.drawImage(QPointF(x0 + src.left(), y0 + src.top()), image, src)
                painter.restore()
        on_top = self._on_top()
        for item in on_top:
            self._draw_item(painter, item)
        self.drawn_on_top += len(on_top)
