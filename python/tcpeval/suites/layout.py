"""The files of a suite directory, named once for the runner that writes them and the report
that reads them."""

from __future__ import annotations

SUITE_FILE = "suite.toml"  # the suite as run: its tests and verdict rules
RUN_FILE = "run.json"  # the stack, the baseline, full or quick
MEASURES_FILE = "measures.parquet"  # in each test's sweep directory: one row per run
