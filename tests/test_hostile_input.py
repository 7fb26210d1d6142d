"""Hostile input: every bad value is one line on stderr naming the user's field and
the value, exit code 2 — never a traceback, an overflow, minutes of parsing, the core's JSON, or
nonsense run as if it were fine."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from tcpeval.cli import app
from tcpeval.scenario import ScenarioError, load_scenario
from tcpeval.units import parse_buffer, parse_duration, parse_rate, parse_size

# The base scenario: 1 s, 10 Mb/s, 50 packets, one Reno flow at 20 ms.
BASE_TOML = """\
duration = "1s"
[bottleneck]
rate = "10Mbps"
queue = "50pkt"
[[flow]]
cc = "reno"
rtt = "20ms"
"""


@pytest.fixture
def base_file(tmp_path: Path) -> Path:
    path = tmp_path / "base.toml"
    path.write_text(BASE_TOML)
    return path


runner = CliRunner()


def sim(scenario: Path, *overrides: str) -> Result:
    """`tcpeval sim` in this process (the fuzzer, bench/fuzz_scenarios.py, runs it in others)."""
    sets = [arg for override in overrides for arg in ("--set", override)]
    out = scenario.parent / "out"
    return runner.invoke(app, ["sim", str(scenario), "--out", str(out), "--no-plots", *sets])


def assert_one_line_naming(run: Result, field: str, value: str) -> None:
    assert run.exit_code == 2, (run.stderr, run.exception)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith(f"error: {field}: '{value}' "), lines[0]
    assert "{" not in lines[0], "quotes the core's JSON"


# (override, field named, value quoted)
HOSTILE = [
    # 3. counts without bound
    ("flow.0.count=1000000000", "flow[0].count", "1000000000"),
    ("flow.0.count=18446744073709551615", "flow[0].count", "18446744073709551615"),
    ("flow.0.initial_cwnd=1000000000", "flow[0].initial_cwnd", "1000000000"),
    # 4. overflows
    ('flow.0.rtt="1e309ms"', "flow[0].rtt", "1e309ms"),
    ('bottleneck.delay="1e308ms"', "bottleneck.delay", "1e308ms"),
    ('bottleneck.queue="1e308MB"', "bottleneck.queue", "1e308MB"),
    ('flow.0.window="1e400%bdp"', "flow[0].window", "1e400%bdp"),
    ('duration="1e999999us"', "duration", "1e999999us"),
    (
        'bottleneck.queue="1000000%bdp";bottleneck.rate="1000Tbps";flow.0.rtt="1000s"',
        "bottleneck.queue",
        "1000000%bdp",
    ),
    # 7. values the core cannot hold
    ('bottleneck.rate="1e30Gbps"', "bottleneck.rate", "1e30Gbps"),
    ("flow.0.mss=10000000000", "flow[0].mss", "10000000000"),
    ('flow.0.cc={name="aimd", a=nan}', "flow[0].cc.a", "nan"),
    ('flow.0.cc={name="aimd", a=inf}', "flow[0].cc.a", "inf"),
    # 8. nonsense
    ('flow.0.cc={name="bbr", cwnd_gain=-1}', "flow[0].cc", "bbr"),
    ('flow.0.cc={name="vegas", alpha=-1, beta=-1}', "flow[0].cc", "vegas"),
    ('flow.0.cc={name="htcp", alpha_quadratic=-1}', "flow[0].cc", "htcp"),
    ('flow.0.cc={name="bbr", bw_window_rounds=0}', "flow[0].cc", "bbr"),
    ('flow.0.cc={name="aimd", a=1e300}', "flow[0].cc", "aimd"),
    ('bottleneck.rate="１０Mbps"', "bottleneck.rate", "１０Mbps"),
    ('flow.0.start="2s"', "flow[0].start", "2s"),
]


@pytest.mark.parametrize(("override", "field", "value"), HOSTILE)
def test_hostile_values_are_one_line_naming_field_and_value(
    base_file: Path, override: str, field: str, value: str
) -> None:
    assert_one_line_naming(sim(base_file, *override.split(";")), field, value)


def test_web_shape_inf_is_refused_naming_it(base_file: Path) -> None:
    web = (
        '[[web]]\ncc = "reno"\nrtt = "20ms"\narrival_rate = 5.0\nmean_size = "10KB"\nshape = inf\n'
    )
    base_file.write_text(BASE_TOML + web)
    assert_one_line_naming(sim(base_file), "web[0].shape", "inf")


def test_onoff_count_has_a_bound(base_file: Path) -> None:
    base_file.write_text(BASE_TOML + '[[onoff]]\nrate = "1Mbps"\ncount = 18446744073709551616\n')
    assert_one_line_naming(sim(base_file), "onoff[0].count", "18446744073709551616")


def test_absurd_exponents_are_refused_at_once() -> None:
    """5. "1e999990ns" took 107 s to parse, "1e200000B" 4.6 s."""
    started = time.perf_counter()
    for parse, text in (
        (parse_duration, "1e999990ns"),
        (parse_size, "1e200000B"),
        (parse_rate, "1e99999Mbps"),
        (parse_buffer, "1e200000B"),
        (parse_duration, "0." + "0" * 100_000 + "1s"),
    ):
        with pytest.raises(ValueError, match="out of range"):
            parse(text)
    assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize("parse", [parse_rate, parse_duration, parse_buffer])
def test_only_ascii_digits_are_numbers(parse: object) -> None:
    for text in ("１０Mbps", "١٠ms", "१०pkt"):
        with pytest.raises(ValueError, match="not a number"):
            parse(text)  # type: ignore[operator]


@pytest.mark.parametrize("nesting", ["[" * 2000 + "]" * 2000, "{a=" * 2000 + "1" + "}" * 2000])
def test_deep_nesting_is_one_line(tmp_path: Path, nesting: str) -> None:
    """6. A file nested 2,000 levels deep gave a 1,107-line RecursionError."""
    path = tmp_path / "deep.toml"
    path.write_text(f'duration = "1s"\nx = {nesting}\n')
    with pytest.raises(ScenarioError, match="nested too deeply"):
        load_scenario(path)
    run = sim(path)
    assert run.exit_code == 2
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr


def test_a_name_that_is_bad_mathtext_still_plots(base_file: Path, tmp_path: Path) -> None:
    """12. `name = "$\\frac{1$"` crashed plotting after the result was saved."""
    base_file.write_text('name = "$\\\\frac{1$"\n' + BASE_TOML)
    command = [sys.executable, "-m", "tcpeval", "sim", str(base_file), "--out", str(tmp_path / "o")]
    run = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "o" / "cwnd.png").is_file()
