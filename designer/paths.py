"""Where the packaged data live, from a checkout and from an installed wheel alike."""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent


def _data_dir(installed: str, checkout: str) -> Path:
    inside = _PKG / installed
    if inside.is_dir():
        return inside
    return _PKG.parent / checkout


def models_dir() -> Path:
    """The catalog folder (``models/`` in a checkout, ``designer/_models`` when installed)."""
    return _data_dir("_models", "models")


def resources_dir() -> Path:
    """Icons, example designs and styles (``resources/`` or ``designer/_resources``)."""
    return _data_dir("_resources", "resources")


def user_config_dir() -> Path:
    """Per-user settings and catalog folder (``~/.config/dpu-designer``)."""
    import os

    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "dpu-designer"
