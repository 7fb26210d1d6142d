from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from helpers import SMALL_TOML, assert_packets_conserved
from tcpeval import backends, cli
from tcpeval.cli import app
from tcpeval.result import FLOW_COLUMNS, LINK_COLUMNS, SIM_FLOW_COLUMNS, SIM_LINK_COLUMNS
from tcpeval.scenario import cc_algorithms
from tcpeval.suite_files import suite_names

runner = CliRunner()


@pytest.fixture
def small_file(tmp_path: Path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(SMALL_TOML)
    return path


def tcpeval(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """The installed command in its own process, as a user runs it."""
    command = [sys.executable, "-m", "tcpeval", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def test_sim_writes_exactly_the_result_files_with_the_contract_columns(
    small_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    run = runner.invoke(app, ["sim", str(small_file), "--out", str(out), "--no-plots"])
    assert run.exit_code == 0, run.output
    assert sorted(path.name for path in out.iterdir()) == [
        "flows.parquet",
        "links.parquet",
        "summary.json",
        "tcpeval.json",
    ]
    flow_columns = (*FLOW_COLUMNS, *SIM_FLOW_COLUMNS, "cc", "goodput_mbps")
    assert tuple(pd.read_parquet(out / "flows.parquet").columns) == flow_columns
    link_columns = (*LINK_COLUMNS, *SIM_LINK_COLUMNS)
    assert tuple(pd.read_parquet(out / "links.parquet").columns) == link_columns
    summary = json.loads((out / "summary.json").read_text())
    assert {"scenario", "flows", "bottleneck", "jain_index", "backend"} <= summary.keys()
    flow_keys = {"id", "group", "cc", "rtt_ms", "goodput_mbps", "bytes_delivered"}
    assert flow_keys | {"retransmits", "timeouts", "completion_s"} <= summary["flows"][0].keys()
    assert {"utilization", "drops", "mean_queue_pkts"} <= summary["bottleneck"].keys()
    backend = summary["backend"]
    assert (backend["name"], backend["duration_s"]) == ("sim", 3.0)
    assert backend["wall_seconds"] > 0
    assert {"events", "packets_delivered", "packets_sent"} <= backend["details"].keys()


def test_sim_prints_the_flow_table(small_file: Path, tmp_path: Path) -> None:
    run = runner.invoke(app, ["sim", str(small_file), "--out", str(tmp_path / "o"), "--no-plots"])
    assert run.exit_code == 0, run.output
    for text in ("goodput Mb/s", "retransmits", "bottleneck utilization", "simulator events"):
        assert text in run.stdout
    assert re.search(r"│\s+1 │ reno\s+│\s+20 │", run.stdout)  # the second flow's row


def test_sim_json_prints_the_saved_summary(small_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run = runner.invoke(app, ["sim", str(small_file), "--out", str(out), "--json", "--no-plots"])
    assert run.exit_code == 0, run.output
    assert json.loads(run.stdout) == json.loads((out / "summary.json").read_text())


def test_sim_overrides_apply(small_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ["sim", str(small_file), "--out", str(out), "--no-plots", "--json"]
    run = runner.invoke(app, [*args, "--set", "flow.0.count=3", "--set", "duration=1s"])
    assert run.exit_code == 0, run.output
    summary = json.loads(run.stdout)
    assert len(summary["flows"]) == 3
    assert summary["backend"]["duration_s"] == 1.0


def test_same_scenario_same_summary_byte_for_byte(small_file: Path, tmp_path: Path) -> None:
    texts = []
    for out in (tmp_path / "first", tmp_path / "second"):
        # Random loss too, so the seeded loss process must replay exactly.
        run = tcpeval(
            "sim", small_file, "--out", out, "--no-plots", "--set", "bottleneck.loss=1e-3"
        )
        assert run.returncode == 0, run.stderr
        text = (out / "summary.json").read_text()
        assert_packets_conserved(json.loads(text)["backend"]["details"])
        texts.append(re.sub(r'\n *"wall_seconds": [^\n]*', "", text))
    assert texts[0] == texts[1]
    first = json.loads((tmp_path / "first" / "summary.json").read_text())
    assert first["bottleneck"]["random_drops"] > 0
    assert "wall_seconds" in first["backend"]


BAD_INPUTS = [
    # (what is wrong, extra TOML or None, --set arguments, words the error must contain)
    ("unknown key", '[bottleneck]\nqeue = "1pkt"', [], ["bottleneck.qeue", "unknown key"]),
    ("missing unit", None, ["--set", "flow.0.rtt=42"], ["flow[0].rtt", "'42'", "unit"]),
    ("negative rate", None, ["--set", "bottleneck.rate=-5Mbps"], ["bottleneck.rate", "'-5Mbps'"]),
    ("zero rate", None, ["--set", "bottleneck.rate=0Mbps"], ["bottleneck.rate", "'0Mbps'"]),
    (
        "queue < 1 packet",
        None,
        ["--set", "bottleneck.queue=1000B"],
        ["bottleneck.queue", "'1000B'"],
    ),
    ("unknown cc", None, ["--set", "flow.0.cc=renoo"], ["flow[0].cc", "'renoo'", "reno"]),
    ("unknown override", None, ["--set", "flow.3.rtt=42ms"], ["--set", "'flow.3.rtt=42ms'"]),
    ("bad aqm", None, ["--set", "bottleneck.aqm=sfq"], ["bottleneck.aqm", "'sfq'", "droptail"]),
    ("unknown link", None, ["--set", 'flow.0.route=["wan"]'], ["flow[0].route[0]", "'wan'"]),
    ("rtt < delays", None, ["--set", "bottleneck.delay=50ms"], ["flow[0].rtt", "'20ms'"]),
    ("pcap link", None, ["--set", "pcap=wan"], ["pcap", "'wan'", "not a link"]),
    ("pacing", None, ["--set", "flow.0.pacing=fast"], ["flow[0].pacing", "neither"]),
    (
        "unknown cc parameter",
        None,
        ["--set", 'flow.0.cc={ name = "reno", no_such_parameter = 1 }'],
        ["flow[0].cc", "no_such_parameter"],
    ),
]


@pytest.mark.parametrize(
    ("extra_toml", "overrides", "words"),
    [case[1:] for case in BAD_INPUTS],
    ids=[case[0] for case in BAD_INPUTS],
)
def test_bad_input_is_one_line_and_exit_code_2(
    tmp_path: Path, extra_toml: str | None, overrides: list[str], words: list[str]
) -> None:
    path = tmp_path / "bad.toml"
    text = SMALL_TOML if extra_toml is None else SMALL_TOML.replace("[bottleneck]", extra_toml)
    path.write_text(text)
    run = tcpeval("sim", path, "--out", tmp_path / "out", "--no-plots", *overrides)
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    [line] = run.stderr.splitlines()
    assert line.startswith("error: ")
    for word in words:
        assert word in line
    assert not (tmp_path / "out").exists()


def test_malformed_toml_is_one_line_and_exit_code_2(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text('duration = "3s"\n[bottleneck\n')
    run = tcpeval("sim", path, "--out", tmp_path / "out")
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    assert run.stderr.startswith(f"error: {path}: is not valid TOML")
    assert "line 2" in run.stderr
    assert len(run.stderr.splitlines()) == 1


def test_out_refuses_to_replace_a_directory_that_is_not_a_result(
    small_file: Path, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    run = runner.invoke(app, ["sim", str(small_file), "--out", str(tmp_path), "--no-plots"])
    assert run.exit_code == 2
    assert "not a tcpeval result" in run.stderr
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_cc_list_shows_every_registered_algorithm() -> None:
    run = runner.invoke(app, ["cc", "list"])
    assert run.exit_code == 0, run.output
    for algorithm in cc_algorithms():
        assert algorithm["name"] in run.stdout


def test_demo_runs_examples_and_sets_recovery_beside_the_model(tmp_path: Path) -> None:
    examples = tmp_path / "examples"
    examples.mkdir()
    (examples / "quick-recovery.toml").write_text(
        'name = "quick-recovery"\nduration = "2s"\nsample_interval = "10ms"\n'
        '[bottleneck]\nrate = "20Mbps"\nqueue = "200%bdp"\n'
        '[[flow]]\ncc = "reno"\nrtt = "20ms"\nwindow = "100%bdp"\ndelayed_ack = false\n'
        'drop_at = ["0.5s"]\n'
    )
    run = runner.invoke(app, ["demo", str(examples), "--out", str(tmp_path / "out")])
    assert run.exit_code == 0, run.output
    assert {path.name for path in (tmp_path / "out" / "quick-recovery").iterdir()} == {
        "summary.json",
        "flows.parquet",
        "links.parquet",
        "cwnd.png",
        "goodput.png",
        "queue.png",
        "tcpeval.json",
    }
    # W = 20 Mb/s × 20 ms / (8 × 1500 B) = 33 packets → (W/2)·RTT = 0.33 s
    assert "(W/2)·RTT" in run.stdout
    assert re.search(r"quick-recovery\s+│\s+33 │\s+20ms │ .* │\s+0\.33 │", run.stdout)
    # Then the host profiles: the textbook sender's second halving, Linux's single one (its
    # TSO frames end slow start at 1,958 where segments one by one end it at 1,954).
    rows = dict(re.findall(r"│ (linux|rfc)\s+│\s+([\d,]+) │", run.stdout))
    assert rows == {"linux": "1,958", "rfc": "977"}
    # Last, the linux host beside the kernel's recorded figures (tests/test_fidelity.py).
    assert "The linux host against the kernel" in run.stdout


def test_demo_sets_mathis_beside_one_lossy_connection_but_not_beside_striped_streams(
    tmp_path: Path,
) -> None:
    examples = tmp_path / "examples"
    examples.mkdir()
    lossy = (
        'duration = "2s"\n[bottleneck]\nrate = "20Mbps"\nloss = 1e-3\n'
        '[[flow]]\ncc = "reno"\nrtt = "20ms"\n'
    )
    (examples / "one.toml").write_text('name = "one-connection"\n' + lossy)
    (examples / "striped.toml").write_text(
        'name = "striped"\n' + lossy + 'size = "10MB"\nstreams = 4\n'
    )
    run = runner.invoke(
        app, ["demo", str(examples), "--out", str(tmp_path / "out")], env={"COLUMNS": "200"}
    )
    assert run.exit_code == 0, run.output
    mathis_rows = run.stdout.split("Reno's goodput under random loss p")[1]
    assert "one-connection" in mathis_rows
    assert "striped" not in mathis_rows


def test_cc_list_shows_durations_as_durations_and_is_not_cut_when_piped() -> None:
    # Piped, rich would lay the table out in 80 columns and cut BBR's parameters.
    listed = tcpeval("cc", "list")
    assert listed.returncode == 0, listed.stderr
    assert "min_rtt_window_ns=10000000000 (10 s)" in listed.stdout
    assert "…" not in listed.stdout


def test_help_shows_flags_without_a_value_type() -> None:
    shown = runner.invoke(app, ["sim", "--help"], env={"COLUMNS": "120"})
    assert shown.exit_code == 0
    assert "--json" in shown.output
    assert "<bool>" not in shown.output


def test_suite_help_lists_every_suite() -> None:
    shown = runner.invoke(app, ["suite", "--help"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0
    listed = f"A built-in suite: {', '.join(suite_names())}."
    assert listed in " ".join(shown.output.replace("│", " ").split())


def test_the_command_loads_no_pandas_duckdb_or_matplotlib_for_its_help() -> None:
    # What `tcpeval --help` costs is set by what it imports; the CPU time is in docs/performance.md.
    heavy = "('pandas', 'numpy', 'pydantic', 'duckdb', 'matplotlib', 'dask')"
    probe = f"import sys, tcpeval.cli; print([m for m in {heavy} if m in sys.modules])"
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert loaded.stdout.strip() == "[]"
    assert cli.DEFAULT_BACKEND == backends.DEFAULT


def test_ctrl_c_during_a_suite_says_what_is_kept_and_that_a_rerun_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(name: str, cc: str, out: Path, **_: object) -> None:
        (out / "symmetric" / "runs" / "a").mkdir(parents=True)
        (out / "symmetric" / "runs" / "a" / "summary.parquet").write_bytes(b"")
        raise KeyboardInterrupt

    monkeypatch.setattr("tcpeval.suites.runner.run_suite", interrupted)
    done = runner.invoke(app, ["suite", "hamilton", "--cc", "cubic", "--out", str(tmp_path)])
    assert done.exit_code == 130
    assert f"interrupted: 1 finished runs are kept in {tmp_path}/" in done.output
    assert "run the same command again to resume" in done.output


def test_flows_parquet_names_each_samples_algorithm(small_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "mixed"
    mixed = ["--set", 'flow.0.cc="cubic"', "--no-plots"]
    assert runner.invoke(app, ["sim", str(small_file), "--out", str(out), *mixed]).exit_code == 0
    flows = pd.read_parquet(out / "flows.parquet")
    summary = json.loads((out / "summary.json").read_text())
    expected = {flow["id"]: flow["cc"] for flow in summary["flows"]}
    assert (flows["cc"] == flows["flow"].map(expected)).all()
