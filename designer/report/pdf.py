"""Print an HTML document to a paged A4 PDF with QPdfWriter + QTextDocument (no browser).

The document is laid out for the PDF's own resolution (``documentLayout().setPaintDevice``), so
point sizes are real print sizes; each page is painted separately (the document translated up by
one page height per page) with a footer holding the title and "page i of n".

The PDF is drawn into memory and checked to be whole (it ends with the ``%%EOF`` trailer, ISO
32000-1 §7.5.5) before it goes to disk through ``designer.safeio.atomic_write_bytes``: Qt's writer
does not report a failed write, so drawing straight into the file could leave a truncated PDF and
no error when the disk fills; this way a full disk, an error or a kill leaves the old file or none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QBuffer, QIODevice, QMarginsF, QRectF, QSizeF, Qt, QUrl
from PySide6.QtGui import (QColor, QFont, QImage, QPageLayout, QPageSize, QPainter, QPdfWriter,
                           QPen, QTextDocument)

from designer.errors import UsageError

DPI = 300
BODY_PT = 10
FONT_FAMILY = "DejaVu Sans"
MARGINS_MM = QMarginsF(18, 16, 18, 14)
FOOTER_PT = 8


@dataclass
class Page:
    """Geometry of the text area, in device pixels of the PDF."""

    width: float
    height: float   #: text height (the footer below is extra)
    footer: float


@dataclass
class PdfDocument:
    """An HTML body plus the images it names (``<img src="img:NAME">``)."""

    title: str
    html: str
    images: dict[str, QImage] = field(default_factory=dict)
    author: str = ""


def _writer(target: Path | QIODevice, title: str, author: str) -> QPdfWriter:
    writer = QPdfWriter(str(target) if isinstance(target, Path) else target)
    writer.setResolution(DPI)
    writer.setPageSize(QPageSize(QPageSize.A4))
    writer.setPageMargins(MARGINS_MM, QPageLayout.Millimeter)
    writer.setTitle(title)
    writer.setCreator(author)
    return writer


def page_geometry() -> Page:
    """The text area of an A4 page with :data:`MARGINS_MM` and room for the footer."""
    size = QPageSize(QPageSize.A4).size(QPageSize.Millimeter)
    width = (size.width() - MARGINS_MM.left() - MARGINS_MM.right()) / 25.4 * DPI
    height = (size.height() - MARGINS_MM.top() - MARGINS_MM.bottom()) / 25.4 * DPI
    footer = FOOTER_PT / 72 * DPI * 2.5
    return Page(width, height - footer, footer)


def _layout_once(html: str, doc: PdfDocument, writer: QPdfWriter, page: Page) -> QTextDocument:
    text = QTextDocument()
    text.documentLayout().setPaintDevice(writer)
    text.setDefaultFont(QFont(FONT_FAMILY, BODY_PT))
    text.setDocumentMargin(0)
    for name, image in doc.images.items():
        text.addResource(QTextDocument.ImageResource, QUrl(f"img:{name}"), image)
    text.setHtml(html)
    text.setPageSize(QSizeF(page.width, page.height))
    return text


#: most headings :func:`_laid_out` moves to a new page (one layout each; the example report moves 2)
MAX_MOVED_HEADINGS = 12
_HEADING_TAG = re.compile(r"<h[1-6](?=[ >])")


def _laid_out(doc: PdfDocument, writer: QPdfWriter, page: Page) -> QTextDocument:
    """``doc`` laid out on pages, no heading left alone at a page's foot: such a heading (what
    follows it starts on the next page, :func:`orphaned_headings`) gets ``page-break-before``
    and the document is laid out again, first such heading first (moving it moves everything
    after it), as word processors' "keep with next" does; QTextDocument has no such property.
    Changing a laid-out document's block formats in place left blocks unlaid (height 0, lost
    from the PDF), so each pass lays out the HTML anew."""
    html = doc.html
    text = _layout_once(html, doc, writer, page)
    for _ in range(MAX_MOVED_HEADINGS):
        orphans = _orphans(text, page.height)
        if not orphans:
            break
        tags = list(_HEADING_TAG.finditer(html))
        if orphans[0] >= len(tags):  # a heading the HTML does not spell as <hN>: leave it
            break
        at = tags[orphans[0]].end()
        html = html[:at] + ' style="page-break-before: always;"' + html[at:]
        text = _layout_once(html, doc, writer, page)
    return text


def _orphans(text: QTextDocument, page_height: float) -> list[int]:
    """Numbers (in document order, counting headings only) of the headings that end a page."""
    layout = text.documentLayout()
    out = []
    n = 0
    block = text.begin()
    while block.isValid():
        nxt = block.next()
        if block.blockFormat().headingLevel():
            if nxt.isValid():
                top = layout.blockBoundingRect(block).top()
                page = int(top // page_height)
                if (top > page * page_height + 1
                        and int(layout.blockBoundingRect(nxt).bottom() // page_height) > page):
                    out.append(n)
            n += 1
        block = nxt
    return out


def orphaned_headings(text: QTextDocument, page_height: float) -> list[str]:
    """Headings that end a page: what follows them starts on a later page (none after
    :func:`_laid_out`, which every PDF and page count goes through)."""
    heads = []
    block = text.begin()
    while block.isValid():
        if block.blockFormat().headingLevel():
            heads.append(block.text())
        block = block.next()
    return [heads[i] for i in _orphans(text, page_height)]


def laid_out(doc: PdfDocument) -> tuple[QTextDocument, Page]:
    """``doc`` laid out as :func:`write_pdf` lays it out (for checks of the pages)."""
    page = page_geometry()
    buffer = QBuffer()
    buffer.open(QIODevice.WriteOnly)
    text = _laid_out(doc, _writer(buffer, doc.title, doc.author), page)
    text.setParent(None)
    return text, page


def heading_pages(doc: PdfDocument) -> list[tuple[str, int]]:
    """``(text, page number)`` of every level-1 heading, as :func:`write_pdf` would lay them out
    (for a table of contents)."""
    page = page_geometry()
    buffer = QBuffer()
    buffer.open(QIODevice.WriteOnly)
    text = _laid_out(doc, _writer(buffer, doc.title, doc.author), page)
    layout = text.documentLayout()
    out = []
    block = text.begin()
    while block.isValid():
        if block.blockFormat().headingLevel() == 1:
            top = layout.blockBoundingRect(block).top()
            out.append((block.text(), int(top // page.height) + 1))
        block = block.next()
    return out


def check_target(path: str | Path, *, inputs=()) -> Path:
    """``path`` if a PDF can be written there (``designer.safeio.check_output_path``: not a folder,
    device, pipe or one of ``inputs``; the folder exists), else a UsageError saying why."""
    from designer.safeio import check_output_path

    check_output_path(path, inputs=inputs, what="report")
    return Path(path)


def write_pdf(doc: PdfDocument, path: str | Path, *, inputs=()) -> int:
    """Write ``doc`` to ``path`` as an A4 PDF, atomically; returns the number of pages."""
    from designer.safeio import atomic_write_bytes

    path = check_target(path, inputs=inputs)
    buffer = QBuffer()
    buffer.open(QIODevice.WriteOnly)
    pages = _paint(doc, buffer)
    data = bytes(buffer.data())
    if not data.rstrip().endswith(b"%%EOF"):
        raise UsageError(f"{path}: the PDF could not be drawn whole; nothing was changed")
    atomic_write_bytes(path, data, inputs=inputs, what="report")
    return pages


def _paint(doc: PdfDocument, device: QIODevice) -> int:
    """Lay out and paint ``doc`` into ``device`` as a PDF; returns the number of pages."""
    page = page_geometry()
    writer = _writer(device, doc.title, doc.author)
    text = _laid_out(doc, writer, page)
    pages = text.pageCount()
    painter = QPainter()
    if not painter.begin(writer):
        raise UsageError("cannot draw the PDF (Qt's PDF writer refused to start)")
    try:
        footer_font = QFont(FONT_FAMILY, FOOTER_PT)
        for i in range(pages):
            if i:
                writer.newPage()
            painter.save()
            painter.translate(0, -i * page.height)
            text.drawContents(painter, QRectF(0, i * page.height, page.width, page.height))
            painter.restore()
            box = QRectF(0, page.height + page.footer * 0.35, page.width, page.footer * 0.65)
            painter.setPen(QPen(QColor("#999999"), 2))
            painter.drawLine(box.topLeft(), box.topRight())
            painter.setPen(QColor("#555555"))
            painter.setFont(footer_font)
            number = f"Page {i + 1} of {pages}"
            metrics = painter.fontMetrics()  # the title left of the page number, cut to fit with "…"
            room = box.width() - metrics.horizontalAdvance(number) - 3 * metrics.averageCharWidth()
            painter.drawText(box, Qt.AlignLeft | Qt.AlignVCenter,
                             metrics.elidedText(doc.title, Qt.ElideMiddle, max(0, int(room))))
            painter.drawText(box, Qt.AlignRight | Qt.AlignVCenter, number)
    finally:
        painter.end()
    return pages
