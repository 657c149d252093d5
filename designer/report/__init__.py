"""Reports: PNG/SVG export of the canvas and plots (``export``), the A4 PDF report (``build``,
``pdf``) and the File → Export menu of the window (``actions``)."""
