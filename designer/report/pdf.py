"""Print an HTML document to a paged A4 PDF with QPdfWriter + QTextDocument (no browser).

The document is laid out for the PDF's own resolution (``documentLayout().setPaintDevice``), so
point sizes are real print sizes; each page is painted separately (the document translated up by
one page height per page) with a footer holding the title and "page i of n".
"""

from __future__ import annotations

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


def _laid_out(doc: PdfDocument, writer: QPdfWriter, page: Page) -> QTextDocument:
    text = QTextDocument()
    text.documentLayout().setPaintDevice(writer)
    text.setDefaultFont(QFont(FONT_FAMILY, BODY_PT))
    text.setDocumentMargin(0)
    for name, image in doc.images.items():
        text.addResource(QTextDocument.ImageResource, QUrl(f"img:{name}"), image)
    text.setHtml(doc.html)
    text.setPageSize(QSizeF(page.width, page.height))
    return text


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


def check_target(path: str | Path) -> Path:
    """``path`` as a Path if a PDF can be written there, else a UsageError saying why."""
    path = Path(path)
    if not path.parent.is_dir():
        raise UsageError(f"{path}: the folder {path.parent} does not exist; create it or "
                         "choose another output file")
    if path.is_dir():
        raise UsageError(f"{path}: is a folder; give a file name ending in .pdf")
    return path


def write_pdf(doc: PdfDocument, path: str | Path) -> int:
    """Write ``doc`` to ``path`` as an A4 PDF; returns the number of pages."""
    path = check_target(path)
    page = page_geometry()
    writer = _writer(path, doc.title, doc.author)
    text = _laid_out(doc, writer, page)
    pages = text.pageCount()
    painter = QPainter()
    if not painter.begin(writer):
        raise UsageError(f"{path}: cannot write the PDF (is the file open elsewhere, or the "
                         "folder read-only?)")
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
            painter.drawText(box, Qt.AlignLeft | Qt.AlignVCenter, doc.title)
            painter.drawText(box, Qt.AlignRight | Qt.AlignVCenter, f"Page {i + 1} of {pages}")
    finally:
        painter.end()
    return pages
