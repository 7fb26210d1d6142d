from __future__ import annotations

from pathlib import Path

from helpers import small_scenario
from tcpeval import simulate
from tcpeval.report.plots import write_plots

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_write_plots_draws_cwnd_goodput_and_queue(tmp_path: Path) -> None:
    paths = write_plots(simulate(small_scenario()), tmp_path)
    assert [path.name for path in paths] == ["cwnd.png", "goodput.png", "queue.png"]
    for path in paths:
        data = path.read_bytes()
        assert data.startswith(PNG_SIGNATURE)
        assert len(data) > 10_000  # axes, lines and labels, not an empty canvas
