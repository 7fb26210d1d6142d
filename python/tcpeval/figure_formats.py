"""The file formats figures are written in: `--format png,svg,pdf` on every command that plots.

PNG is for screens; SVG and PDF are for papers, drawn as vectors with their text kept as text
(the SVG's labels are `<text>` elements that an editor can change, the PDF's fonts embedded as
TrueType, Type 42, which journals' checks accept where Type 3 fails them). Parsing needs no
matplotlib, and the command line checks the list while parsing (cli_app.py), so that a bad
`--format` is refused before a run starts.
"""

from __future__ import annotations

FORMATS = ("png", "svg", "pdf")
DEFAULT = "png"
OPTION = "--format"


def parse_formats(text: str) -> tuple[str, ...]:
    """A comma-separated list of formats, in order, each once: 'png,svg' → ('png', 'svg').

    Raises ScenarioError naming `--format` and the value."""
    from tcpeval.scenario.errors import ScenarioError

    names = [name.strip().lower() for name in text.split(",") if name.strip()]
    if not names:
        raise ScenarioError(OPTION, text, f"names no format (choose from {', '.join(FORMATS)})")
    unknown = [name for name in names if name not in FORMATS]
    if unknown:
        reason = f"has unknown format '{unknown[0]}' (choose from {', '.join(FORMATS)})"
        raise ScenarioError(OPTION, text, reason)
    return tuple(dict.fromkeys(names))
