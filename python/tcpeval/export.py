"""A result or a sweep as files other tools read.

- CSV, tidy: one observation per row, so spreadsheets, R and pandas read it without reshaping.
  A result gives `flows.csv` (`t_s, flow, cc, metric, value`: each metric's name carries its
  unit, as in flows.parquet), `links.csv` (`t_s, link, metric, value`) and `summary_flows.csv`
  (one row per flow of summary.json); a sweep or suite gives `runs.csv`, what `tcpeval.load`
  returns (one row per flow per run).
- Flent's data file (format 4, `NAME.flent.gz`), so that Flent's plots draw a tcpeval run as
  its `tcp_nup` test: `flent -i RUN.flent.gz -p totals -o totals.png`. Each flow is a stream
  `TCP upload::N` (its goodput per sample, Mbit/s) with the sum, mean and Jain index Flent
  stores beside them; Flent's per-stream TCP_INFO keys carry cwnd (packets), RTT (ms) and
  pacing rate (Mbit/s). Flent's `Ping (ms) ICMP` series holds the flows' mean smoothed RTT: no
  ICMP probe runs, and that is the delay a ping beside them would see. The data file's clock
  starts when the result was written (summary.json's time), since a run's samples count from 0.
"""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from tcpeval import result as results
from tcpeval.layout import SUMMARY_FILE
from tcpeval.metrics import jain_index
from tcpeval.store import is_sweep, load

FLENT_FORMAT = 4  # the version of Flent's data files this writes (Flent 2.x reads it)
FLENT_TEST = "tcp_nup"
FLENT_STREAM = "TCP upload::{}"
FLENT_SUFFIX = ".flent.gz"
FLENT_TCP_INFO = {"tcp_cwnd": "cwnd_pkts", "tcp_rtt": "srtt_ms"}
FLENT_COLUMNS = [results.GOODPUT_COLUMN, "pacing_rate_bps", *FLENT_TCP_INFO.values()]


def export_csv(source: Path, out: Path) -> list[Path]:
    """Write `source` (a result, sweep or suite directory) as tidy CSV files into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    if not (source / SUMMARY_FILE).is_file():
        frame = load(source)
        assert isinstance(frame, pd.DataFrame)  # a sweep or suite: not a single result
        return [_written(frame, out / "runs.csv")]
    run = results.load(source)
    return [
        _written(_long(run.flows, ["t_s", "flow", results.ALGORITHM_COLUMN]), out / "flows.csv"),
        _written(_long(run.links, ["t_s", "link"]), out / "links.csv"),
        _written(_flat(run.summary["flows"]), out / "summary_flows.csv"),
    ]


def export_flent(source: Path, out: Path) -> Path:
    """Write the result in `source` as Flent's data file in `out`; ValueError for a sweep."""
    if is_sweep(source) or not (source / SUMMARY_FILE).is_file():
        raise ValueError("is not a single result: Flent's data file holds one test run")
    run = results.load(source)
    written = datetime.fromtimestamp((source / SUMMARY_FILE).stat().st_mtime, UTC)
    data = flent_data(run, written)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{run.summary['scenario']['name']}{FLENT_SUFFIX}"
    with gzip.open(path, "wt") as file:
        json.dump(data, file, allow_nan=False)
    return path


def flent_data(run: results.Result, t0: datetime) -> dict[str, Any]:
    """The run as Flent's data file holds a test: metadata, sample times, each series."""
    wide = {
        column: run.flows.pivot(index="t_s", columns="flow", values=column)
        for column in FLENT_COLUMNS
    }
    goodput = wide[results.GOODPUT_COLUMN]
    times = [float(t) for t in goodput.index]
    series: dict[str, list[float | None]] = {}
    raw: dict[str, list[dict[str, float]]] = {}
    for flow in map(int, goodput.columns):
        name = FLENT_STREAM.format(flow + 1)
        series[name] = _values(goodput[flow])
        raw[name] = _raw_samples(wide, flow, t0.timestamp())
    series["TCP upload sum"] = _values(goodput.sum(axis="columns", min_count=1))
    series["TCP upload avg"] = _values(goodput.mean(axis="columns"))
    series["TCP upload fairness"] = [_jain(row) for row in goodput.to_numpy()]
    series["Ping (ms) ICMP"] = _values(wide["srtt_ms"].mean(axis="columns"))
    return {
        "version": FLENT_FORMAT,
        "metadata": _flent_metadata(run, t0, times, len(goodput.columns)),
        "x_values": times,
        "results": series,
        "raw_values": raw,
    }


def _flent_metadata(
    run: results.Result, t0: datetime, times: list[float], streams: int
) -> dict[str, Any]:
    scenario, backend = run.summary["scenario"], run.summary["backend"]["name"]
    stamp = t0.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    step_s = times[1] - times[0] if len(times) > 1 else 0.0
    return {
        "NAME": FLENT_TEST,
        "TITLE": scenario["name"],
        "NOTE": f"tcpeval {run.summary.get('tcpeval_version', '')}, {backend}",
        "HOST": f"tcpeval-{backend}",
        "HOSTS": [f"tcpeval-{backend}"],
        "LOCAL_HOST": "tcpeval",
        "TIME": stamp,
        "T0": stamp,
        "LENGTH": times[-1] if times else 0.0,
        "TOTAL_LENGTH": times[-1] if times else 0.0,
        "STEP_SIZE": step_s,
        "TEST_PARAMETERS": {"upload_streams": streams},
        "IP_VERSION": 4,
        "SERIES_META": {},
    }


def _raw_samples(
    wide: dict[str, pd.DataFrame], flow: int, start_s: float
) -> list[dict[str, float]]:
    """A stream's samples as Flent keeps them: absolute time, value, its TCP_INFO keys."""
    goodput = wide[results.GOODPUT_COLUMN][flow]
    columns = {
        "val": goodput,
        "tcp_delivery_rate": goodput,
        "tcp_pacing_rate": wide["pacing_rate_bps"][flow] / 1e6,
        **{key: wide[column][flow] for key, column in FLENT_TCP_INFO.items()},
    }
    samples = []
    for index, t_s in enumerate(goodput.index):
        sample = {key: float(values.iloc[index]) for key, values in columns.items()}
        if not pd.isna(sample["val"]):
            samples.append({"t": start_s + float(t_s)} | _finite(sample))
    return samples


def _finite(sample: dict[str, float]) -> dict[str, float]:
    return {key: value for key, value in sample.items() if not pd.isna(value)}


def _values(column: pd.Series) -> list[float | None]:
    return [None if pd.isna(value) else float(value) for value in column]


def _jain(row: Any) -> float | None:
    rates = [float(rate) for rate in row if not pd.isna(rate)]
    return jain_index(rates) if rates and sum(rates) > 0 else None


def _long(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    return frame.melt(id_vars=keys, var_name="metric", value_name="value")


def _flat(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Summary rows with their scalar fields only (nested ones stay in summary.json)."""
    return pd.DataFrame(
        [
            {key: value for key, value in row.items() if not isinstance(value, dict | list)}
            for row in rows
        ]
    )


def _written(frame: pd.DataFrame, path: Path) -> Path:
    frame.to_csv(path, index=False)
    return path
