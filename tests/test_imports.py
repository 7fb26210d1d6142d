"""What each way into tcpeval imports: a sweep's worker processes and the installed script
load only what they use (the CPU this saves: docs/sweeps.md, "Where a suite's time goes")."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import tomllib
from functools import partial
from pathlib import Path

from tcpeval import backends
from tcpeval.sweep.rundir import execute

PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"
COMMAND_STACK = ("typer", "rich", "tcpeval.cli")
REPORT_STACK = ("matplotlib", "jinja2", "duckdb", "tcpeval.report", "tcpeval.sweep.runner")


def loaded_after(code: str, watched: tuple[str, ...], given: bytes = b"") -> list[str]:
    """The modules of `watched` a fresh interpreter holds after running `code`."""
    found = f"[m for m in {watched!r} if m in sys.modules]"
    probe = f"{code}\nimport json, sys; print(json.dumps({found}))"
    done = subprocess.run(
        [sys.executable, "-c", probe], input=given, capture_output=True, check=True
    )
    return json.loads(done.stdout)


def test_the_installed_script_imports_no_command_until_it_runs() -> None:
    """A pool's workers start by importing the script that started the sweep (spawn)."""
    entry = tomllib.loads(PYPROJECT.read_text())["project"]["scripts"]["tcpeval"]
    module, function = entry.split(":")
    code = f"from {module} import {function}"
    assert loaded_after(code, (*COMMAND_STACK, "pandas", "pydantic")) == []


def test_a_worker_loads_no_command_or_report_stack_for_its_run() -> None:
    """What a worker imports to run: the unpickled work function the sweep sends."""
    work = pickle.dumps(partial(execute, backend=backends.get("sim")))
    code = "import pickle, sys; pickle.loads(sys.stdin.buffer.read())"
    assert loaded_after(code, (*COMMAND_STACK, *REPORT_STACK), given=work) == []
