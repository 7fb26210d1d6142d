"""The report as one self-contained HTML file: `DIR/report.html`.

Figures are PNGs embedded as base64 `data:` URIs, time series are interactive charts whose
library is inlined too (charts.py), and the CSS is inline, so the file opens offline and can be
mailed or archived alone. The layout is templates/report.html.j2. With `--format`, every figure
is also written to `DIR/figures/` for papers.

Drawing the PNGs is most of a report's time, so they are drawn by processes forked once the
figures are built (`png_data_uris`): forked, they share the figures without pickling them and
import nothing again.
"""

from __future__ import annotations

import base64
import io
import multiprocessing
import os
import re
import signal
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from jinja2 import Environment, PackageLoader, StrictUndefined
from matplotlib.figure import Figure

from tcpeval.layout import REPORT_FILE
from tcpeval.metrics import label
from tcpeval.report.charts import chart_assets, chart_json
from tcpeval.report.content import SectionView, section_view
from tcpeval.report.dataset import ReportData, load_report_data
from tcpeval.report.figure_files import save_figure
from tcpeval.report.tables import number
from tcpeval.report.verdicts import Verdict, evaluate

TEMPLATE = "report.html.j2"
DPI = 90
FIGURES_DIR = "figures"


@dataclass(frozen=True)
class ReportFile:
    """A written report: where it is and the verdicts it gives."""

    path: Path
    verdicts: list[Verdict]


def write_report(
    directory: str | Path, baseline: str | None = None, formats: Sequence[str] = ()
) -> ReportFile:
    """Build the report of a sweep or suite directory into `DIR/report.html`, and each figure
    into `DIR/figures/` in each of `formats`.

    Raises ReportError (one line) when the directory holds nothing to report on.
    """
    data = load_report_data(directory, baseline)
    verdicts = evaluate(
        data.frame(), data.rules, axes=data.axes(), baseline=data.baseline, stack_column="stack"
    )
    views = [section_view(section, data, verdicts) for section in data.sections]
    path = data.directory / REPORT_FILE
    path.write_text(render_report(data, verdicts, views), encoding="utf-8")
    if formats:
        write_figure_files(views, data.directory / FIGURES_DIR, formats)
    return ReportFile(path, verdicts)


def write_figure_files(
    views: Sequence[SectionView], directory: Path, formats: Sequence[str]
) -> list[Path]:
    """Each drawn figure as `SECTION-PANEL.<format>` (names in lower case, dashed)."""
    directory.mkdir(exist_ok=True)
    paths = []
    for view in views:
        for panel in view.panels:
            if panel.figure is not None:
                stem = _file_stem(f"{view.section.name} {panel.title}")
                paths += save_figure(panel.figure, directory, stem, formats)
    return paths


def _file_stem(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def render_report(
    data: ReportData, verdicts: list[Verdict], views: Sequence[SectionView] | None = None
) -> str:
    """The HTML text of the report (of `views`, when they are built already)."""
    if views is None:
        views = [section_view(section, data, verdicts) for section in data.sections]
    drawn = [panel.figure for view in views for panel in view.panels if panel.figure is not None]
    uris = iter(png_data_uris(drawn))
    template = templates().get_template(TEMPLATE)
    return template.render(
        data=data,
        verdicts=verdicts,
        failed=sum(1 for v in verdicts if v.passed is False),
        views=views,
        figures=[[(p, None if p.figure is None else next(uris)) for p in v.panels] for v in views],
        detail=detail,
        chart_assets=chart_assets(),
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    )


def templates() -> Environment:
    """The report's templates (templates/), HTML-escaped, with the `number`, `label` and
    `chart_json` filters."""
    environment = Environment(
        loader=PackageLoader("tcpeval.report", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["number"] = number
    environment.filters["label"] = label
    environment.filters["chart_json"] = chart_json
    return environment


def png_data_uris(figures: Sequence[Figure]) -> list[str]:
    """Each figure as a PNG URI, drawn by one forked process per usable CPU. Here, in turn:
    with one CPU; in a daemonic process, which multiprocessing forbids to have children; and
    while another thread runs (Dask leaves one after a sweep), since a lock it held at the fork
    would stay held in the child for ever."""
    jobs = min(len(os.sched_getaffinity(0)), len(figures))
    alone = threading.active_count() == 1 and not multiprocessing.current_process().daemon
    if jobs < 2 or not alone:
        return [png_data_uri(figure) for figure in figures]
    fork = multiprocessing.get_context("fork")
    with fork.Pool(jobs, initializer=_share, initargs=(figures,)) as pool:
        return pool.map(_drawn, range(len(figures)), chunksize=1)


_shared: Sequence[Figure] = ()
"""The figures a forked drawing process inherited (`_share`)."""


def _share(figures: Sequence[Figure]) -> None:
    global _shared
    _shared = figures
    # Ctrl-C is the parent's to handle: leaving the pool's `with` ends these processes.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _drawn(index: int) -> str:
    return png_data_uri(_shared[index])


def png_data_uri(figure: Figure) -> str:
    """A figure as a `data:image/png;base64,...` URI."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def detail(verdict: Verdict) -> str:
    """What a verdict's row says: the rule's message on failure, else the worst point seen."""
    if verdict.passed is None or verdict.passed is False:
        return verdict.message
    return f"worst point {verdict.where}: {number(verdict.value)}"
