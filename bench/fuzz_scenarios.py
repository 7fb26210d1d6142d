"""The hostile-scenario fuzzer at length: `tcpeval sim` on --cases generated scenarios (the
engine of tests/hostile.py), in --workers processes each capped at --memory-cap of address
space, and the count of every outcome class.

    python bench/fuzz_scenarios.py [--cases 100000] [--workers 2] [--seed 1] [--for 3600]
                                   [--time-limit 20] [--memory-cap 3GiB] [--max-memory 512MB]

A worker runs cases one after another in its own interpreter (Python starts once); a case
longer than --time-limit is stopped as Ctrl-C would stop it. A worker that dies (an abort, the
cap reached outside the budget) costs its case the class `abort`; one silent for the time
limit plus a minute is killed and its case counted as `hang`. `--for` stops handing out cases
after that many seconds (a shared machine), and the counts are of the cases done. Prints the
counts per class and the first few cases of every bad class; the goal is zero in each
bad class. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from hostile import BAD, GOOD, run_case, scenario_case
from tcpeval.units import parse_size

EXAMPLES_KEPT = 3
SILENCE_GRACE_S = 60.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--for", dest="for_s", type=float, default=float("inf"))
    parser.add_argument("--time-limit", type=float, default=20.0)
    parser.add_argument("--memory-cap", default="3GiB")
    parser.add_argument("--max-memory", default="512MB")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _serve(args)
        return
    counts, examples, wall = _fuzz(args)
    done = sum(counts.values())
    print(
        f"{done:,} cases in {wall:.0f} s ({done / wall:.0f}/s), "
        f"{args.workers} workers capped at {args.memory_cap}, budget {args.max_memory}"
    )
    for name in (*GOOD, *BAD):
        print(f"  {name:28} {counts.get(name, 0):>8,}")
    for name, cases in examples.items():
        for case in cases:
            print(f"\n--- {name} (case seed {case['seed']}):\n{case['text'][:1500]}")


def _fuzz(args: argparse.Namespace) -> tuple[Counter[str], dict[str, list[dict]], float]:
    seeds = iter(range(args.seed * 10**9, args.seed * 10**9 + args.cases))
    lock = threading.Lock()
    started = time.perf_counter()
    counts: Counter[str] = Counter()
    examples: dict[str, list[dict]] = {}

    def next_seed() -> int | None:
        with lock:
            in_time = time.perf_counter() - started < args.for_s
            return next(seeds, None) if in_time else None

    def record(seed: int, outcome: str) -> None:
        with lock:
            counts[outcome] += 1
            if outcome in BAD and len(examples.setdefault(outcome, [])) < EXAMPLES_KEPT:
                case = scenario_case(random.Random(seed), _mutations(seed))
                examples[outcome].append({"seed": seed, "text": case.text})
            done = sum(counts.values())
            if done % 1000 == 0:
                print(f"{done:,} cases: {dict(counts)}", file=sys.stderr, flush=True)

    threads = [
        threading.Thread(target=_drive, args=(args, next_seed, record)) for _ in range(args.workers)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return counts, examples, time.perf_counter() - started


def _drive(args: argparse.Namespace, next_seed: object, record: object) -> None:
    """Feed one worker process seeds, restarting it after an abort or a hang."""
    worker = None
    seed = next_seed()  # type: ignore[operator]
    while seed is not None:
        worker = worker or _start_worker(args)
        worker.stdin.write(f"{seed}\n")
        worker.stdin.flush()
        answer = _read_line(worker, args.time_limit + SILENCE_GRACE_S)
        if answer is None:
            worker.kill()
            worker.wait()
            record(seed, "hang" if worker.returncode == -9 else "abort")  # type: ignore[operator]
            worker = None
        elif answer == "":
            worker.wait()
            record(seed, "abort")  # type: ignore[operator]
            worker = None
        else:
            record(seed, json.loads(answer)["outcome"])  # type: ignore[operator]
        seed = next_seed()  # type: ignore[operator]
    if worker is not None:
        worker.stdin.close()
        worker.wait()


def _start_worker(args: argparse.Namespace) -> subprocess.Popen[str]:
    command = [
        sys.executable, __file__, "--worker", "--time-limit", str(args.time_limit),
        "--memory-cap", args.memory_cap, "--max-memory", args.max_memory,
    ]  # fmt: skip
    return subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        text=True,
    )  # fmt: skip


def _read_line(worker: subprocess.Popen[str], limit_s: float) -> str | None:
    """The worker's next line ("" if it died), or None when it stays silent past `limit_s`."""
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(worker.stdout.readline()), daemon=True)
    reader.start()
    reader.join(limit_s)
    return line[0] if line else None


def _mutations(seed: int) -> int:
    """0 to 3: a quarter of the cases are valid scenarios of unusual combinations."""
    return seed % 4


def _serve(args: argparse.Namespace) -> None:
    """Worker: a case per seed read from stdin, its outcome as a JSON line on stdout."""
    cap = parse_size(args.memory_cap).bytes
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    with tempfile.TemporaryDirectory(prefix="tcpeval-fuzz-") as directory:
        for line in sys.stdin:
            seed = int(line)
            case = scenario_case(random.Random(seed), _mutations(seed))
            case_dir = Path(directory) / str(seed)
            case_dir.mkdir()
            outcome = run_case(case, case_dir, args.time_limit, args.max_memory)
            subprocess.run(["rm", "-rf", str(case_dir)], check=False)
            print(json.dumps({"outcome": outcome}), flush=True)


if __name__ == "__main__":
    main()
