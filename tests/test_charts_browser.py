"""compare.html in headless Chromium: the charts draw, a drag and setScale zoom the x axis, the
samples replace the overview once few are in view, and nothing is fetched (the page works
offline). Driven by tests/browser/check_charts.js (playwright-core, Debian's Chromium). About
3 s."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tcpeval.compare import compare_backends, write_comparison
from tcpeval.scenario import load_scenario

ROOT = Path(__file__).parents[1]
CHECK = ROOT / "tests" / "browser" / "check_charts.js"
CHROMIUM = Path("/usr/bin/chromium")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
DRAG_SHARE = 0.2  # the script drags from 40% to 60% of the plot's width

SCENARIO = """\
name = "browser-check"
duration = "5s"
sample_interval = "10ms"

[bottleneck]
rate = "20Mbps"
queue = "100%bdp"

[[flow]]
cc = "cubic"
rtt = "40ms"
count = 2
"""

needs_browser = pytest.mark.skipif(
    not CHROMIUM.exists()
    or not (ROOT / "node_modules" / "playwright-core").is_dir()
    or shutil.which("node") is None,
    reason="needs /usr/bin/chromium, node and `npm ci` (.ci/run and the Makefile set them up)",
)


@pytest.fixture(scope="module")
def compare_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("compare")
    (out / "scenario.toml").write_text(SCENARIO)
    scenario = load_scenario(out / "scenario.toml", [])
    return write_comparison(compare_backends(scenario, ["sim", "model"]), out)


@needs_browser
def test_the_compare_page_draws_zooms_and_fetches_nothing(
    compare_page: Path, tmp_path: Path
) -> None:
    screenshot = tmp_path / "chart.png"
    done = subprocess.run(
        ["node", str(CHECK), str(compare_page), str(screenshot)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["errors"] == []  # no script error, no request beyond the file itself
    before, dragged, scaled = seen["before"], seen["dragged"], seen["scaled"]
    assert before["charts"] == 2  # goodput and cwnd
    assert before["series"] == 4  # two flows on each of two backends
    assert before["inked"] > 5_000  # lines, axes and grid; a blank canvas has none
    width = before["x"][1] - before["x"][0]
    dragged_width = dragged["x"][1] - dragged["x"][0]
    assert before["x"][0] < dragged["x"][0] < dragged["x"][1] < before["x"][1]
    # A drag's ends land on whole pixels: a few pixels of the ~1,100 wide plot either way.
    assert dragged_width / width == pytest.approx(DRAG_SHARE, abs=0.01)
    assert scaled["x"][1] - scaled["x"][0] == pytest.approx(dragged_width / 10, rel=1e-9)
    assert scaled["showing"] == "samples"  # few enough in view: drawn as measured
    assert screenshot.read_bytes().startswith(PNG_SIGNATURE)
    assert screenshot.stat().st_size > 10_000
