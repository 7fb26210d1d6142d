"""`tcpeval diagnose` names the limit that was induced, and no other, on a quiet host and on
one whose cores an unrelated CPU hog keeps busy (tests/diagnose_cases.py): real kernel
sockets in lab namespaces this test makes, a 5 s diagnosis each. A case whose path the lab
cannot make is skipped, saying which key.

Every case runs quiet; loaded, the cases of LOADED. On this 2-vCPU machine a loaded case
takes about two minutes (the hog shares the hosts' CPU with the probes, the kernel's packet
work and the diagnosis itself), so all fourteen would double the suite: the full loaded
table is bench/bench_diagnose.py's (docs/diagnose.md, "How it is tested")."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagnose_cases import CASES, run_case, unsupported

# The receive window the site engineer met on a busy host, the window a middlebox
# kept from scaling, and a receiver whose own threads are starved by their quota.
LOADED = ("receiver_window", "window_scaling", "cpu_receiver")
RUNS = [(name, "quiet") for name in CASES] + [(name, "loaded") for name in LOADED]


@pytest.mark.parametrize(("name", "load"), RUNS)
def test_diagnose_names_the_induced_limit(name: str, load: str, tmp_path: Path) -> None:
    missing = unsupported(CASES[name])
    if missing is not None:
        pytest.skip(f"the lab cannot make this path yet: {missing}")
    diagnosis = run_case(name, tmp_path, loaded=load == "loaded")
    case = CASES[name]
    said = diagnosis.verdict
    if case.when_absorbed is not None and said.limit == case.when_absorbed:
        assert any(line.startswith(f"{case.limit}:") for line in said.evidence), said
    else:
        assert said.limit == case.limit, said.model_dump()
    assert (tmp_path / "diagnosis.html").stat().st_size > 10_000
    written = sorted(p.name for p in tmp_path.glob("*.svg"))  # run_case asks for SVG
    assert written == ["cpu.svg", "limited.svg", "throughput.svg", "windows.svg"]
    if CASES[name].limit == "path_loss":
        # Mathis is drawn at the measured loss and RTT, and the simulator ranks stacks.
        assert diagnosis.evidence.single.mathis_bps is not None
        assert {"reno", "cubic", "bbr"} <= set(diagnosis.predictions)
    if CASES[name].limit in ("receiver_window", "send_buffer"):
        # The advice sizes the buffers for twice the BDP measured on this path (100 Mb/s ×
        # 40 ms = 500 kB: at least 4 MiB is advised).
        assert any("4194304" in line for line in diagnosis.verdict.advice)
