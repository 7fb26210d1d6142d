"""Running a scenario in the lab from a test: the base case, and runs voided only by the
hypervisor's stalls tried again."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from tcpeval import backends
from tcpeval.result import Result
from tcpeval.scenario import parse_scenario

LAB = backends.get("lab")


def scenario(**changes: object) -> dict[str, Any]:
    base = {
        "name": "lab-test",
        "duration": "12s",
        "bottleneck": {"rate": "100Mbps", "queue": "100%bdp"},
        "flow": [{"cc": "cubic", "rtt": "40ms"}],
    }
    return base | changes


def run(data: dict[str, Any]) -> Result:
    return backends.run(parse_scenario(data), LAB)


# On a virtual machine the hypervisor stalls the emulator's vCPU for a few ms every so often
# (docs/lab.md): one stall is stated, but stalls frequent enough to make more than one
# packet in a thousand late void the run. A test that needs a valid run runs the case again
# when lateness alone voided it; any other failed check fails the test.
ATTEMPTS = 5
LATENESS = "lateness"


def valid_run(data: dict[str, Any]) -> Result:
    failed: list[dict[str, Any]] = []
    for _ in range(ATTEMPTS):
        result = run(data)
        failed = [c for c in checks_of(result).values() if not c["ok"]]
        assert all(LATENESS in c["name"] for c in failed), failed
        if not failed:
            return result
    raise AssertionError(f"{ATTEMPTS} runs voided by lateness: {failed}")


def checks_of(result: Result) -> dict[str, dict[str, Any]]:
    return {check["name"]: check for check in result.summary["backend"]["details"]["checks"]}


def started_from_the_command_line(tmp_path: Path, cc: str, stderr: int) -> subprocess.Popen[bytes]:
    """`tcpeval run` of a 30 s one-flow lab scenario, as a user starts it: for the tests that
    kill it, or a part of it, while it runs."""
    path = tmp_path / "s.toml"
    path.write_text('duration = "30s"\n[bottleneck]\nrate = "100Mbps"\nqueue = "100%bdp"\n'
                    f'[[flow]]\ncc = "{cc}"\nrtt = "40ms"\n')  # fmt: skip
    tcpeval = Path(sys.executable).with_name("tcpeval")
    command = [str(tcpeval), "run", str(path), "--backend", "lab", "--out", str(tmp_path / "o")]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr)
