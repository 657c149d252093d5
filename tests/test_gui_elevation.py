"""View → Rack elevation: each rack's U positions with what is in them, exportable as PNG/SVG."""

import pytest
from PySide6.QtGui import QImage

from designer.gui.elevation_view import MAX_RACKS
from designer.gui.testing import open_window
from designer.report.elevation import natural_size


#: settings in a folder of its own; a window closed with changes discards them (conftest)
pytestmark = pytest.mark.usefixtures("gui_settings")


def test_the_elevation_shows_each_rack_with_its_members_and_exports(qtbot, tmp_path):
    w = open_window(qtbot)
    topo = w.design.topology
    dialog = w.open_elevation()
    racks = dialog.canvas.racks
    assert [r.id for r in racks] == sorted((c.id for c in topo.racks()),
                                           key=lambda r: (topo.components[r].pos[1], topo.components[r].pos[0]))
    for rack in racks:  # every member at its slot with its height, as the design has it
        members = {c.id: c for c in topo.members(rack.id)}
        assert {m.id for m in rack.members} == set(members)
        for m in rack.members:
            assert m.slot == members[m.id].slot
            assert m.units == int(w.catalog.resolve(members[m.id]).get("rack_units_used") or 1)
    # the selection narrows it: a server selected shows its rack alone
    server = next(s for s in topo.servers() if s.parent)
    w.scene.select_ids([server.id])
    dialog.refresh()
    assert [r.id for r in dialog.canvas.racks] == [server.parent]
    assert "1 selected rack" in dialog.note.text()
    # the picture: drawn (not blank), written as PNG and SVG of the drawing's size
    image = dialog.canvas.grab().toImage()
    assert image.width() > 100 and len({image.pixel(x, y) for x in range(0, image.width(), 7)
                                        for y in range(0, image.height(), 7)}) > 3
    png = dialog.export(tmp_path / "racks.png")
    picture = QImage(str(png))
    w0, h0 = natural_size(dialog.canvas.racks)
    assert (picture.width(), picture.height()) == (int(w0), int(h0))
    svg = dialog.export(tmp_path / "racks.svg").read_text()
    assert "<svg" in svg and server.parent in svg
    from designer.errors import UsageError

    with pytest.raises(UsageError, match="png or .svg"):
        dialog.export(tmp_path / "racks.bmp")


def test_a_design_with_many_racks_shows_the_first_ones_and_says_so(qtbot):
    from designer.topology.templates import rail_optimized

    design = rail_optimized(servers=4 * (MAX_RACKS + 4), storage="none")
    w = open_window(qtbot, design)
    dialog = w.open_elevation()
    total = len(w.design.topology.racks())
    assert total > MAX_RACKS and len(dialog.canvas.racks) == MAX_RACKS
    assert f"first {MAX_RACKS} of {total}" in dialog.note.text()
