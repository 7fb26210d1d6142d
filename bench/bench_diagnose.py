"""Figures for `tcpeval diagnose`: the confusion table of the induced limits
(tests/diagnose_cases.py: what the diagnosis said against what was induced), each on a quiet
host and with an unrelated CPU hog on every core, with the evidence each verdict rested on,
the diagnosis's wall time by step and the whole case's (the lab's set-up included). Needs
root; every path is a lab path the lab removes afterwards.

    .venv/bin/python bench/bench_diagnose.py [--repeats 1] [--cases receiver_window,cpu_sender]
        [--loads quiet,loaded] [--duration 5]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from diagnose_cases import CASES, DURATION_S, run_case, unsupported
from tcpeval.diagnose import Diagnosis

LOADS = ("quiet", "loaded")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--loads", default=",".join(LOADS))
    parser.add_argument("--duration", type=float, default=DURATION_S)
    args = parser.parse_args()
    names = [n for n in args.cases.split(",") if _runnable(n)]
    loads = args.loads.split(",")
    said: Counter[tuple[str, str, str]] = Counter()
    walls: dict[str, list[float]] = {load: [] for load in loads}
    print(f"load average before: {_load_average()}", flush=True)
    for name in names:
        for load in loads:
            for repeat in range(args.repeats):
                started = time.monotonic()
                with tempfile.TemporaryDirectory() as tmp:
                    diagnosis = run_case(name, Path(tmp), load == "loaded", args.duration)
                case_s = time.monotonic() - started
                walls[load].append(case_s)
                said[(name, load, diagnosis.verdict.limit)] += 1
                _print_run(name, load, repeat, diagnosis, case_s)
    print(f"load average after: {_load_average()}")
    _print_table(names, loads, said)
    for load in loads:
        total = sum(walls[load])
        print(f"{load}: {len(walls[load])} cases, {total:.0f} s in all")


def _runnable(name: str) -> bool:
    missing = unsupported(CASES[name])
    if missing is not None:
        print(f"{name}: not run, {missing}")
    return missing is None


def _print_run(name: str, load: str, repeat: int, d: Diagnosis, case_s: float) -> None:
    v, s = d.verdict, d.evidence.single
    steps = ", ".join(f"{step} {sec:.1f}" for step, sec in d.step_seconds.items())
    print(f"{name:30} {load:6} #{repeat + 1}: {v.limit:16} case {case_s:5.1f} s, diagnosis "
          f"{d.wall_seconds:5.1f} s ({steps})\n    {v.headline}", flush=True)  # fmt: skip
    print(
        f"    goodput {s.goodput_bps / 1e6:.1f} Mb/s (N streams "
        f"{d.evidence.multi.goodput_bps / 1e6:.1f}), capacity "
        f"{d.evidence.path.capacity_bps / 1e6:.1f}, srtt {s.srtt_ms:.1f} ms, min_rtt "
        f"{s.min_rtt_ms:.1f} ms, advertised {s.advertised_window_bytes / 1024:.0f} KiB, "
        f"rwnd-limited {s.rwnd_limited:.0%}, sndbuf-limited {s.sndbuf_limited:.0%}, "
        f"app-limited {s.app_limited:.0%}, zero window {s.zero_window:.0%}, retransmitted "
        f"{s.retransmits}/{s.segments_sent}, UDP lost {d.evidence.path.udp_lost}/"
        f"{d.evidence.path.udp_sent}"
    )
    ranked = ", ".join(f"{f.limit} ({_residual(f.residual)})" for f in v.ranked) or "none"
    closest = min(v.fits, key=lambda f: f.closeness, default=None)
    print(f"    holds: {ranked}; closest: {closest.limit if closest else '-'}")
    for c in d.evidence.cpu:
        throttled = "-" if c.throttled is None else f"{c.throttled:.0%}"
        print(
            f"    {c.end} ({c.role}) CPU: busiest thread {c.busiest_thread:.0%}, waiting "
            f"{c.most_waiting_thread:.0%}, throttled {throttled}, busiest core "
            f"{c.busiest_core:.0%}, softirq {c.softirq:.0%}"
        )


def _residual(residual: float | None) -> str:
    return "no rate" if residual is None else f"residual {residual:+.0%}"


def _print_table(names: list[str], loads: list[str], said: Counter[tuple[str, str, str]]) -> None:
    columns = sorted({limit for _, _, limit in said})
    rows = {(n, load): f"{n} ({load}) → {CASES[n].limit}" for n in names for load in loads}
    width = max(len(r) for r in [*rows.values(), "induced (load) \\ said"])
    print("\n" + "induced (load) \\ said".ljust(width), *(f"{c[:12]:>12}" for c in columns))
    for (name, load), label in rows.items():
        print(label.ljust(width), *(f"{said[(name, load, c)] or '.':>12}" for c in columns))


def _load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    main()
