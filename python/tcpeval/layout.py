"""The files of a result, sweep, suite and comparison directory, and the one way they are
published: written whole beside their place, then renamed into it, so that a killed run
leaves the old content or the new, never half of either.

```
RESULT/   summary.json flows.parquet links.parquet [capture.pcap] [*.png]
SWEEP/    grid.toml runs/<run_id>/{params.json, RESULT files, summary.parquet | error.json}
          .staging/ (runs being written)
SUITE/    suite.toml run.json <test>/SWEEP + measures.parquet  report.html
COMPARE/  compare.json compare.html <backend>/RESULT *.png
```
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pandas as pd

# A result.
SUMMARY_FILE = "summary.json"
FLOWS_FILE = "flows.parquet"
LINKS_FILE = "links.parquet"
PCAP_FILE = "capture.pcap"
RESULT_FILES = (SUMMARY_FILE, FLOWS_FILE, LINKS_FILE, PCAP_FILE)

# A sweep.
GRID_FILE = "grid.toml"
RUNS_DIR = "runs"
STAGING_DIR = ".staging"
PARAMS_FILE = "params.json"
ERROR_FILE = "error.json"
SUMMARY_TABLE = "summary.parquet"  # in each run: one row per flow

# A suite.
SUITE_FILE = "suite.toml"  # the suite as run: its tests and verdict rules
RUN_FILE = "run.json"  # the stack, the baseline, the backend, full or quick
MEASURES_FILE = "measures.parquet"  # in each test's sweep directory: one row per run
REPORT_FILE = "report.html"

# A comparison of backends.
COMPARE_FILE = "compare.json"
COMPARE_PAGE = "compare.html"


def publish_directory(
    target: Path,
    write: Callable[[Path], None],
    *,
    staging: Path | None = None,
    keep_existing: Callable[[], bool] = lambda: False,
) -> bool:
    """Let `write` fill a fresh directory, then rename it to `target`, replacing what was there
    unless `keep_existing()` says, once the writing is done, that it must stay. The fresh
    directory is made in `staging` (default: beside the target; same filesystem either way).
    Returns whether the new directory was put in place."""
    staging = staging or target.parent
    staging.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=staging))
    try:
        work = scratch / target.name
        work.mkdir()
        write(work)
        if keep_existing():
            return False
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            target.rename(scratch / "retired")
        work.rename(target)
        return True
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def publish_file(path: Path, content: str | bytes | pd.DataFrame) -> None:
    """Write a file whole under a temporary name beside it, then rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    if isinstance(content, pd.DataFrame):
        content.to_parquet(partial, index=False)
    elif isinstance(content, bytes):
        partial.write_bytes(content)
    else:
        partial.write_text(content)
    partial.replace(path)
