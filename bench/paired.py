"""Compare two builds of the core on one scenario by running them at the same time.

    python bench/paired.py BUILD_A BUILD_B (--flows N | --scenario FILE) [--rounds 4]
        [--rate-gbps 10] [--seconds 20] [--env-b NAME=VALUE ...]

BUILD_A and BUILD_B are `run_json` binaries (`cargo build --profile profiling --example
run_json`, copied aside between the two versions). On a shared VM, runs of one binary taken one
after another vary by up to 1.5x (docs/performance.md), far more than most changes to the core;
two runs taken at the same time, one on each CPU, meet the same neighbours. So each round starts
both at once, pinned to CPUs 0 and 1 (swapped every round), and prints each one's ns per
delivered packet and B's over A's. The median of those ratios is the comparison. With
`--env-b`, B's run also gets those environment variables (e.g. a glibc tunable), so one build
can be compared with itself.

The scenario is `bench/bench_flows.py`'s (`--flows N`: Reno, 100 ms, a BDP of queue, each flow
1 Mb/s of a shared link) or a scenario file, resolved by the installed front. A benchmark
prints numbers; it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_flows import scenario as flows_scenario
from tcpeval.scenario import ScenarioError, load_scenario, parse_scenario, resolution

NS_PER_PKT = re.compile(r"(\d+) ns per delivered packet")


def resolved_json(args: argparse.Namespace) -> str:
    try:
        if args.scenario:
            parsed = load_scenario(args.scenario)
        else:
            parsed = parse_scenario(flows_scenario(args.flows, args.rate_gbps, args.seconds))
    except ScenarioError as error:
        sys.exit(str(error))
    return json.dumps(resolution(parsed).resolved, allow_nan=False)


def start(build: Path, scenario: Path, cpu: int, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        ["taskset", "-c", str(cpu), str(build), str(scenario)],
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ | env,
    )


def ns_per_packet(process: subprocess.Popen[str]) -> int:
    out, _ = process.communicate()
    found = NS_PER_PKT.search(out)
    if process.returncode != 0 or not found:
        sys.exit(f"{process.args[3]} failed (exit {process.returncode})")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build_a", type=Path)
    parser.add_argument("build_b", type=Path)
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--flows", type=int, help="bench_flows.py's case with this many flows")
    which.add_argument("--scenario", type=Path, help="a scenario file")
    parser.add_argument("--rate-gbps", type=int, default=10, help="with --flows; default: 10")
    parser.add_argument("--seconds", type=int, default=20, help="with --flows; default: 20")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--env-b", nargs="*", default=[], metavar="NAME=VALUE")
    args = parser.parse_args()
    for build in (args.build_a, args.build_b):
        if not build.is_file():
            sys.exit(f"{build}: no such file (a run_json binary)")
    if any("=" not in assignment for assignment in args.env_b):
        sys.exit(f"--env-b: {args.env_b} must be NAME=VALUE assignments")
    env_b = dict(assignment.split("=", 1) for assignment in args.env_b)
    with tempfile.TemporaryDirectory() as tmp:
        scenario = Path(tmp) / "resolved.json"
        scenario.write_text(resolved_json(args))
        print(f"{'round':<7}{'A ns/pkt':>10}{'B ns/pkt':>10}{'B / A':>8}")
        ratios = []
        for round_ in range(args.rounds):
            a = start(args.build_a, scenario, round_ % 2, {})
            b = start(args.build_b, scenario, 1 - round_ % 2, env_b)
            ns_a, ns_b = ns_per_packet(a), ns_per_packet(b)
            ratios.append(ns_b / ns_a)
            print(f"{round_ + 1:<7}{ns_a:>10}{ns_b:>10}{ratios[-1]:>8.3f}")
        print(f"median B / A: {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
