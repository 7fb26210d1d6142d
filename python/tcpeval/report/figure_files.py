"""A figure written to files, one per format asked for (figure_formats.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from matplotlib import rc_context
from matplotlib.figure import Figure

PAPER_STYLE = {
    "svg.fonttype": "none",  # text stays <text>, not paths
    "pdf.fonttype": 42,  # TrueType fonts embedded whole, not Type 3
}
PNG_DPI = 110


def save_figure(
    figure: Figure, directory: Path, stem: str, formats: Sequence[str], dpi: int = PNG_DPI
) -> list[Path]:
    """Write `figure` as `directory/stem.<format>` for each format; returns the paths."""
    paths = []
    with rc_context(PAPER_STYLE):
        for name in formats:
            path = directory / f"{stem}.{name}"
            figure.savefig(path, format=name, dpi=dpi)
            paths.append(path)
    return paths
