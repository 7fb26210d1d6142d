"""`tcpeval diagnose` names the limit that was induced, and no other (tests/diagnose_cases.py):
real kernel sockets in lab namespaces this test makes, a 20 s diagnosis each."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagnose_cases import CASES, run_case


@pytest.mark.parametrize("limit", list(CASES))
def test_diagnose_names_the_induced_limit(limit: str, tmp_path: Path) -> None:
    diagnosis = run_case(CASES[limit], tmp_path)
    assert diagnosis.verdict.limit == limit, diagnosis.verdict.model_dump()
    assert (tmp_path / "diagnosis.html").stat().st_size > 10_000
    written = sorted(p.name for p in tmp_path.glob("*.svg"))  # run_case asks for SVG
    assert written == ["cpu.svg", "limited.svg", "throughput.svg", "windows.svg"]
    if limit == "path_loss":
        # Mathis is drawn at the measured loss and RTT, and the simulator ranks stacks.
        assert diagnosis.evidence.single.mathis_bps is not None
        assert {"reno", "cubic", "bbr"} <= set(diagnosis.predictions)
    if limit in ("receiver_window", "send_buffer"):
        # The advice sizes the buffers for twice the BDP measured on this path (100 Mb/s ×
        # 40 ms = 500 kB: at least 4 MiB is advised).
        assert any("4194304" in line for line in diagnosis.verdict.advice)
