"""What the figures add to a single run's wall time: `tcpeval sim` of three flows on a 1 Gb/s,
100 ms path for 120 s, with its figures and with `--no-plots`.

    python bench/bench_plots.py [--repeat 3] [--sample-interval 10ms] [--format png,svg]

Each case runs the command as a user would (a new process: Python start-up and imports
counted) and keeps the fastest of `--repeat` runs, the repeats taking turns between the cases
so that a busy spell on a shared machine does not land on one case only. Prints both wall
times and their difference. A benchmark prints numbers for people to compare; it asserts
nothing.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCENARIO = """\
name = "bench-plots-3-flows"
duration = "120s"

[bottleneck]
rate = "1Gbps"
queue = "100%bdp"

[[flow]]
cc = "cubic"
rtt = "100ms"
count = 3
"""
SAMPLE_INTERVAL = 'sample_interval = "{}"\n'


def wall_seconds(scenario: Path, out: Path, extra: list[str]) -> float:
    """One `tcpeval sim` as a new process, timed from outside."""
    command = [sys.executable, "-m", "tcpeval", "sim", str(scenario), "--out", str(out), *extra]
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--sample-interval", default=None, help="The scenario's; default the simulator's."
    )
    parser.add_argument("--format", default=None, help="The figures' formats, as for `sim`.")
    arguments = parser.parse_args()
    formats = [] if arguments.format is None else ["--format", arguments.format]
    cases = {"without figures": ["--no-plots"], "with figures": formats}
    fastest = dict.fromkeys(cases, float("inf"))
    with tempfile.TemporaryDirectory() as directory:
        scenario = Path(directory) / "scenario.toml"
        interval = arguments.sample_interval
        scenario.write_text((SAMPLE_INTERVAL.format(interval) if interval else "") + SCENARIO)
        for _ in range(arguments.repeat):
            for name, extra in cases.items():
                out = Path(directory) / name.replace(" ", "-")
                fastest[name] = min(fastest[name], wall_seconds(scenario, out, extra))
    for name, seconds in fastest.items():
        print(f"{name:<18}{seconds:>8.2f} s")
    added = fastest["with figures"] - fastest["without figures"]
    print(f"{'figures add':<18}{added:>8.2f} s  (fastest of {arguments.repeat})")


if __name__ == "__main__":
    main()
