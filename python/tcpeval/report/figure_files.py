"""A figure written to files, one per format asked for (figure_formats.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from matplotlib import rc_context
from matplotlib.figure import Figure

PNG_DPI = 110


def save_figure(
    figure: Figure, directory: Path, stem: str, formats: Sequence[str], dpi: int = PNG_DPI
) -> list[Path]:
    """Write `figure` as `directory/stem.<format>` for each format; returns the paths."""
    paths = []
    # SVG text stays <text>, not paths; PDF fonts are embedded as TrueType (42), not Type 3.
    with rc_context({"svg.fonttype": "none", "pdf.fonttype": 42}):
        for name in formats:
            path = directory / f"{stem}.{name}"
            figure.savefig(path, format=name, dpi=dpi)
            paths.append(path)
    return paths
