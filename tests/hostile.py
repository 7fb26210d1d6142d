"""Hostile scenarios, as a user who means harm (or types fast) would write them: a valid scenario
with a few of its values replaced by huge, tiny, negative, non-finite, oddly written or
mistyped ones, keys added or removed, and now and then a table nested thousands deep.

The one mutation engine of tests/test_fuzz.py (hypothesis draws its seeds) and
bench/fuzz_scenarios.py (10^5 cases); `classify` sorts what `tcpeval sim` did with a case
into the outcome classes below.
"""

from __future__ import annotations

import copy
import math
import random
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from tcpeval.cli import app
from tcpeval.sweep.tomlwriter import dumps

BASE: dict[str, Any] = {
    "name": "fuzz",
    "duration": "1s",
    "bottleneck": {"rate": "10Mbps", "queue": "50pkt"},
    "flow": [{"cc": "reno", "rtt": "20ms"}],
}

# Tables a mutation may add, so that every kind of key gets its turn.
EXTRAS: list[tuple[str, Any]] = [
    ("web", [{"cc": "cubic", "rtt": "20ms", "arrival_rate": 5.0, "mean_size": "20KB"}]),
    ("reqresp", [{"cc": "reno", "rtt": "20ms", "count": 3}]),
    ("cbr", [{"rate": "1Mbps"}]),
    ("onoff", [{"rate": "2Mbps", "count": 2}]),
    ("link", [{"name": "wan", "rate": "100Mbps", "delay": "1ms", "aqm": "red"}]),
    ("sample_interval", "10ms"),
    ("seed", 7),
    ("pcap", "bottleneck"),
]
FLOW_KEYS: list[tuple[str, Any]] = [
    ("count", 2),
    ("window", "100%bdp"),
    ("initial_cwnd", 10),
    ("mss", 1448),
    ("size", "1MB"),
    ("start", "0.1s"),
    ("stop", "0.9s"),
    ("pacing", "5Mbps"),
    ("drop_at", ["0.5s"]),
    ("drop_every", 100),
    ("cc", {"name": "aimd", "a": 1.0, "b": 0.5}),
    ("cc", {"name": "bbr", "cwnd_gain": 2.0}),
    ("cc", {"name": "vegas", "alpha": 2.0, "beta": 4.0}),
    ("cc", {"name": "htcp", "alpha_quadratic": 0.25}),
]
LINK_KEYS: list[tuple[str, Any]] = [
    ("delay", "5ms"),
    ("loss", 0.01),
    ("aqm", {"name": "codel", "target": "5ms"}),
    ("aqm", {"name": "red", "max_p": 0.1}),
    ("queue", "20%bdp"),
]

NUMBERS = [0, -1, 1, 2**63 - 1, 2**64, 10**30, 1e300, -1e300, 1e-300, 0.5, 1e9, 2**31]
NONFINITE = [float("nan"), float("inf"), float("-inf")]
UNITS = ["ms", "s", "us", "ns", "Mbps", "Gbps", "Tbps", "B", "MB", "GiB", "pkt", "%bdp", "", "x"]
MANTISSAS = ["1", "0", "-1", "1e309", "1e999999", "1e-40", "1.5", "10", "1e30", ".5", "1e6"]
ODD_STRINGS = [
    "１０Mbps",  # fullwidth digits
    "١٠ms",  # Arabic-Indic digits
    "$\\frac{1$",  # mathtext that does not parse
    "line\nbreak",
    "",
    " ",
    "x" * 10_000,
    "10 Mbps",
    "NaNms",
    "infs",
    "1e999990ns",
]


def hostile_value(rng: random.Random) -> Any:
    """One value a field should not (or may just) accept."""
    kind = rng.randrange(6)
    if kind == 0:
        return rng.choice(NUMBERS)
    if kind == 1:
        return rng.choice(NONFINITE)
    if kind == 2:
        return rng.choice(MANTISSAS) + rng.choice(UNITS)
    if kind == 3:
        return rng.choice(ODD_STRINGS)
    if kind == 4:
        return rng.choice([True, [], {}, [1, 2], {"name": "reno"}, {"x": 1}])
    return rng.choice(["reno", "cubic", "bbr", "nosuch", "droptail", "red", "codel", "bottleneck"])


@dataclass(frozen=True)
class Case:
    text: str
    """The scenario, a TOML document."""
    nonsense: bool
    """Whether it holds a value no key may take (nan, inf, a negative number, digits that are
    not ASCII outside `name`): running it is the class `accepted nonsense`."""


def scenario_case(rng: random.Random, mutations: int = 2) -> Case:
    """BASE with some tables and keys added, then `mutations` hostile edits."""
    scenario = copy.deepcopy(BASE)
    for key, value in rng.sample(EXTRAS, rng.randrange(3)):
        scenario[key] = copy.deepcopy(value)
    for key, value in rng.sample(FLOW_KEYS, rng.randrange(3)):
        scenario["flow"][0][key] = copy.deepcopy(value)
    for key, value in rng.sample(LINK_KEYS, rng.randrange(2)):
        scenario["bottleneck"][key] = copy.deepcopy(value)
    inserted = [_mutate(scenario, rng) for _ in range(mutations)]
    text = dumps(scenario)
    if rng.random() < 0.02:
        depth = rng.choice([100, 2000, 5000])
        text += "deep = " + "[" * depth + "]" * depth + "\n"
    leaves = list(_leaves(scenario))
    nonsense = any(_is_nonsense(*pair) for pair in inserted if pair is not None and pair in leaves)
    return Case(text, nonsense)


def _mutate(scenario: dict[str, Any], rng: random.Random) -> tuple[Any, Any] | None:
    """Replace, remove or add one leaf somewhere in the scenario; the (key, value) put in."""
    table, key = _pick_leaf(scenario, rng)
    action = rng.random()
    if action >= 0.8 and isinstance(table, dict):
        del table[key]
        if action < 0.9:
            return None
        key = rng.choice(["bogus", "rate", "count", "cc", "queue", "stop"])
    table[key] = hostile_value(rng)
    return key, table[key]


def _leaves(node: Any) -> Any:
    """(key, value) of every leaf still in the scenario (a later edit may have removed one)."""
    items = node.items() if isinstance(node, dict) else enumerate(node)
    for key, value in items:
        yield key, value
        if isinstance(value, dict | list):
            yield from _leaves(value)


def _is_nonsense(key: Any, value: Any) -> bool:
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return True
    if isinstance(value, int | float) and not isinstance(value, bool) and value < 0:
        return True
    return (
        isinstance(value, str)
        and key != "name"
        and any(c.isdigit() and not c.isascii() for c in value)
    )


def _pick_leaf(node: Any, rng: random.Random) -> tuple[Any, Any]:
    while True:
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        key = rng.choice(keys)
        child = node[key]
        if isinstance(child, dict | list) and child and rng.random() < 0.7:
            node = child
            continue
        return node, key


# Outcome classes: the good ones first; the goal is zero in every other.
GOOD = ("ran", "clean error", "stopped at the time limit")
BAD = (
    "accepted nonsense",
    "traceback",
    "abort",
    "hang",
    "names `scenario`",
    "multi-line error",
    "run failed",
    "no field named",
)


def classify(exit_code: int | None, stderr: str, crashed: bool) -> str:
    """What `tcpeval sim` did: `exit_code` None for a case that did not end in time, `crashed`
    for an uncaught exception (a traceback) in the process."""
    if exit_code is None:
        return "hang"
    if crashed or "Traceback" in stderr:
        return "traceback"
    if exit_code < 0 or exit_code == 134:
        return "abort"
    if exit_code == 0:
        return "ran"
    if exit_code == 130:
        return "stopped at the time limit"
    if exit_code == 1:
        return "run failed"
    lines = stderr.strip().splitlines()
    if len(lines) != 1:
        return "multi-line error"
    if lines[0].startswith("error: scenario: "):
        return "names `scenario`"
    field = lines[0].removeprefix("error: ").partition(":")[0]
    if not lines[0].startswith("error: ") or not field or " " in field:
        return "no field named"
    return "clean error"


def run_case(case: Case, directory: Path, time_limit_s: float, max_memory: str) -> str:
    """`tcpeval sim` on the case in this process, its result in `directory`, stopped (as by
    Ctrl-C) after `time_limit_s`; returns the outcome class."""
    scenario = directory / "case.toml"
    scenario.write_text(case.text)
    out = str(directory / "out")
    args = ["sim", str(scenario), "--out", out, "--no-plots", "--max-memory", max_memory]
    previous = signal.signal(signal.SIGALRM, _interrupt)
    signal.setitimer(signal.ITIMER_REAL, time_limit_s)
    try:
        result = CliRunner().invoke(app, args)
    except KeyboardInterrupt:  # the limit struck outside the run (the tables, the plots)
        return classify(130, "", crashed=False)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    crashed = result.exception is not None and not isinstance(result.exception, SystemExit)
    outcome = classify(result.exit_code, result.stderr, crashed)
    return "accepted nonsense" if outcome == "ran" and case.nonsense else outcome


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
