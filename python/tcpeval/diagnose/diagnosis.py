"""One diagnosis: every measurement against a target, the evidence gathered from them, the
verdict, and the files written (summary.json, diagnosis.html, each TCP test's result)."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from tcpeval.diagnose.evidence import Evidence, gather
from tcpeval.diagnose.measure import Target, measure
from tcpeval.diagnose.page import diagnosis_figures, render, write_figures
from tcpeval.diagnose.predict import stack_goodputs
from tcpeval.diagnose.verdict import Verdict, decide


class Diagnosis(BaseModel):
    host: str
    verdict: Verdict
    evidence: Evidence
    # Simulated goodput per stack on the measured path (loss-limited paths only).
    predictions: dict[str, float]
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
) -> Diagnosis:
    """Runs every measurement against `target` (with `response_bytes`, request-response
    exchanges with responses of that size too); writes `out/summary.json`,
    `out/diagnosis.html`, each TCP test's result directory and the page's figures in each of
    `formats`."""
    started = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    runs = measure(target, duration_s, streams, path, out, response_bytes)
    evidence = gather(runs)
    verdict = decide(evidence)
    predictions: dict[str, float] = {}
    if verdict.limit == "path_loss":
        single = evidence.single
        capacity = evidence.path.capacity_bps
        predictions = stack_goodputs(capacity, single.min_rtt_ms, single.loss_rate)
        verdict = decide(evidence, predictions)
    runs.single.save(out / "tcp-1-stream")
    runs.multi.save(out / f"tcp-{streams}-streams")
    diagnosis = Diagnosis(
        host=target.server,
        verdict=verdict,
        evidence=evidence,
        predictions=predictions,
        step_seconds=runs.step_seconds,
        wall_seconds=time.monotonic() - started,
    )
    (out / "summary.json").write_text(json.dumps(diagnosis.model_dump(), indent=2))
    figures = diagnosis_figures(runs, evidence)
    (out / "diagnosis.html").write_text(render(target.server, verdict, evidence, runs, figures))
    write_figures(figures, out, formats)
    return diagnosis
