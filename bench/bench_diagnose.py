"""Figures for `tcpeval diagnose`: the confusion table of the six induced limits
(tests/diagnose_cases.py: what the diagnosis said against what was induced) and each
diagnosis's wall time. Needs root; every path is a lab path the lab removes afterwards.

    .venv/bin/python bench/bench_diagnose.py [--repeats 1] [--cases receiver_window,cpu]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from diagnose_cases import CASES, run_case

LIMITS = ("receiver_window", "send_buffer", "path_loss", "path_capacity", "cpu", "disk")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--cases", default=",".join(CASES))
    args = parser.parse_args()
    said: Counter[tuple[str, str]] = Counter()
    for name in args.cases.split(","):
        for repeat in range(args.repeats):
            with tempfile.TemporaryDirectory() as tmp:
                diagnosis = run_case(CASES[name], Path(tmp))
            verdict = diagnosis.verdict
            said[(name, verdict.limit)] += 1
            print(f"{name:16} #{repeat + 1}: {verdict.limit:16} {diagnosis.wall_seconds:5.1f} s"
                  f"  {verdict.headline}", flush=True)  # fmt: skip
    columns = sorted({limit for _, limit in said} | set(LIMITS), key=_order)
    print("\ninduced \\ said  " + " ".join(f"{c[:10]:>10}" for c in columns))
    for name in args.cases.split(","):
        print(f"{name:16}" + " ".join(f"{said[(name, c)]:>10}" for c in columns))


def _order(limit: str) -> int:
    return LIMITS.index(limit) if limit in LIMITS else len(LIMITS)


if __name__ == "__main__":
    main()
