"""One diagnosis: every measurement against a target, the evidence gathered from them, the
verdict, with --verify the advice checked on the test connections, and the files written
(summary.json, diagnosis.html, each TCP test's result)."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from tcpeval.diagnose.client_side import client_side_evidence, missing_evidence
from tcpeval.diagnose.evidence import Evidence, gather
from tcpeval.diagnose.measure import Target, measure, tcp_seconds
from tcpeval.diagnose.page import diagnosis_figures, render, write_figures
from tcpeval.diagnose.predict import stack_goodputs
from tcpeval.diagnose.verdict import Verdict, decide
from tcpeval.diagnose.verify import Verification, verify


class Diagnosis(BaseModel):
    host: str
    verdict: Verdict
    evidence: Evidence
    # Simulated goodput per stack on the measured path (loss-limited paths only).
    predictions: dict[str, float]
    # What a tcpeval server would have measured and this one (iperf3) did not.
    missing: list[str] = []
    verification: Verification | None = None
    step_seconds: dict[str, float]
    wall_seconds: float


def diagnose(
    target: Target,
    out: Path,
    duration_s: float = 20.0,
    streams: int = 4,
    path: Path | None = None,
    formats: Sequence[str] = (),
    response_bytes: int | None = None,
    verify_advice: bool = False,
    apply_host: bool = False,
) -> Diagnosis:
    """Runs every measurement against `target` (with `response_bytes`, request-response
    exchanges with responses of that size too); writes `out/summary.json`,
    `out/diagnosis.html`, each TCP test's result directory and the page's figures in each of
    `formats`. With `verify_advice`, applies the advice to the test connections and measures again
    (`apply_host`: the advised sysctls of this host too)."""
    started = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    runs = measure(target, duration_s, streams, path, out, response_bytes)
    evidence = client_side_evidence(runs) if target.iperf3 else gather(runs)
    verdict = decide(evidence)
    predictions: dict[str, float] = {}
    if verdict.limit == "path_loss":
        single = evidence.single
        capacity = evidence.path.capacity_bps
        predictions = stack_goodputs(capacity, single.min_rtt_ms, single.loss_rate)
        verdict = decide(evidence, predictions)
    verification = None
    if verify_advice:
        verify_started = time.monotonic()
        verification = verify(
            target, evidence, verdict.limit, predictions, out, tcp_seconds(duration_s), apply_host
        )
        runs.step_seconds["verify"] = time.monotonic() - verify_started
    runs.single.save(out / "tcp-1-stream")
    runs.multi.save(out / f"tcp-{streams}-streams")
    diagnosis = Diagnosis(
        host=target.server,
        verdict=verdict,
        evidence=evidence,
        predictions=predictions,
        missing=missing_evidence(runs, target.iperf3),
        verification=verification,
        step_seconds=runs.step_seconds,
        wall_seconds=time.monotonic() - started,
    )
    (out / "summary.json").write_text(json.dumps(diagnosis.model_dump(), indent=2))
    figures = diagnosis_figures(runs, evidence)
    (out / "diagnosis.html").write_text(render(target.server, diagnosis, runs, figures))
    write_figures(figures, out, formats)
    return diagnosis
