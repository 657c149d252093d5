"""Before Qt starts: can its platform plugin work here? A clear line instead of Qt's abort.

Qt's X11 platform plugin (``libqxcb.so``, through ``libQt6XcbQpa.so.6``) needs X client libraries
that a bare Debian/Ubuntu installation lacks (libxcb-icccm4, libxcb-keysyms1, ...). Without them Qt
prints "Could not load the Qt platform plugin "xcb"" and aborts the process (SIGABRT, a core
dump, no hint which package is missing). :func:`display_problem` tries to load each library the
plugin links against (``ctypes.CDLL``, a few ms) and says which are missing with the exact
``apt-get install`` line; it also says when there is no display at all.

The library list is what ``ldd`` shows for ``PySide6/Qt/lib/libQt6XcbQpa.so.6`` of PySide6 6.11
(derived: ``ldd .../libQt6XcbQpa.so.6 | grep -i 'xcb\\|xkb'``), each with the Debian 12 package
that ships it (``dpkg -S``). Qt's own documentation lists the same libraries under "X11 Requirements"
(doc.qt.io/qt-6/linux-requirements.html).
"""

from __future__ import annotations

import ctypes
import os
import sys

#: shared library (soname) -> Debian/Ubuntu package that ships it
XCB_LIBRARIES: dict[str, str] = {
    "libxcb.so.1": "libxcb1",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
}

#: every package above, the line the README gives for a bare Debian/Ubuntu machine
APT_LINE = "sudo apt-get install -y " + " ".join(sorted(set(XCB_LIBRARIES.values())))


def platform_name(env: dict | None = None) -> str:
    """The platform plugin Qt will pick: QT_QPA_PLATFORM's first entry, else (on Linux) wayland
    in a Wayland session and xcb otherwise (Qt 6's order)."""
    env = os.environ if env is None else env
    chosen = (env.get("QT_QPA_PLATFORM") or "").split(";")[0].split(":")[0].strip()
    if chosen:
        return chosen
    if not sys.platform.startswith("linux"):
        return "native"
    if env.get("XDG_SESSION_TYPE") == "wayland" and env.get("WAYLAND_DISPLAY"):
        return "wayland"
    return "xcb"


def missing_libraries(libraries: dict[str, str] | None = None) -> list[str]:
    """The sonames of ``libraries`` (default :data:`XCB_LIBRARIES`) that cannot be loaded."""
    missing = []
    for soname in (XCB_LIBRARIES if libraries is None else libraries):
        try:
            ctypes.CDLL(soname)
        except OSError:
            missing.append(soname)
    return missing


def display_problem(env: dict | None = None, libraries: dict[str, str] | None = None) -> str | None:
    """One line saying why the window cannot open here (missing X libraries, no display), or None."""
    env = os.environ if env is None else env
    if platform_name(env) != "xcb":
        return None
    libraries = XCB_LIBRARIES if libraries is None else libraries
    missing = missing_libraries(libraries)
    if missing:
        packages = " ".join(sorted({libraries[m] for m in missing}))
        return (f"the window cannot open: Qt's X11 platform plugin (xcb) needs {', '.join(missing)}, "
                f"which {'is' if len(missing) == 1 else 'are'} not installed; install "
                f"{'it' if len(missing) == 1 else 'them'} with: sudo apt-get install -y {packages} "
                f"(all the plugin needs: {APT_LINE}), or render offscreen with --screenshot OUT.png")
    if not env.get("DISPLAY"):
        return ("the window cannot open: no X display (DISPLAY is not set); start it in a desktop "
                "session, or render the window offscreen with --screenshot OUT.png")
    return None
