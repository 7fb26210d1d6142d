"""A result: the summary and time series every backend returns, saved as JSON and Parquet.

Layout of a result directory (layout.py): `summary.json`, `flows.parquet` (one row per active flow
per sample), `links.parquet` (one row per link direction per sample), when the scenario captured a
link `capture.pcap`, and the manifest `tcpeval.json` that marks it as tcpeval's. The summary
satisfies `summary.Summary`, checked whenever a Result is made or loaded, so every consumer may
rely on it whichever backend ran.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from tcpeval import _core
from tcpeval.layout import (
    FLOWS_FILE,
    LINKS_FILE,
    MANIFEST_FILE,
    PCAP_FILE,
    SUMMARY_FILE,
    damage,
    publish_directory,
    read_manifest,
)
from tcpeval.metrics.throughput import goodput_mbps
from tcpeval.summary import Summary, path_rates_bps

# The columns every backend's time series carry (docs/contract.md), named once, in the core; a
# backend may add more.
FLOW_COLUMNS: tuple[str, ...] = tuple(_core.FLOW_COLUMNS)
LINK_COLUMNS: tuple[str, ...] = tuple(_core.LINK_COLUMNS)
SIM_FLOW_COLUMNS: tuple[str, ...] = tuple(_core.SIM_FLOW_COLUMNS)
"""The simulator's flows carry these after FLOW_COLUMNS (its ECN counters; docs/contract.md)."""
SIM_LINK_COLUMNS: tuple[str, ...] = tuple(_core.SIM_LINK_COLUMNS)
ALGORITHM_COLUMN = "cc"
"""Added to every result's flows after FLOW_COLUMNS: the flow's algorithm, from the summary."""
GOODPUT_COLUMN = "goodput_mbps"
"""Added to every result's flows: the goodput over each sample interval, never above the
flow's path rate, with the run's totals (metrics.goodput_mbps: in-order delivery releases a
hole's worth at once, which differencing delivered_bytes would show as a spike)."""


@dataclass
class Result:
    summary: dict[str, Any]
    flows: pd.DataFrame
    links: pd.DataFrame
    pcap: bytes | None = None
    """The captured link's packets as a classic pcap file, if the scenario asked for one."""

    def __post_init__(self) -> None:
        Summary.model_validate(self.summary)
        for frame, columns in ((self.flows, FLOW_COLUMNS), (self.links, LINK_COLUMNS)):
            missing = [name for name in columns if name not in frame]
            if missing:
                raise ValueError(f"a result's time series lack the columns {missing}")
        if ALGORITHM_COLUMN not in self.flows:
            # Each sample names its flow's algorithm, so that a mixed run's series group by it.
            algorithms = {flow["id"]: flow["cc"] for flow in self.summary["flows"]}
            self.flows = self.flows.assign(cc=self.flows["flow"].map(algorithms))
        if GOODPUT_COLUMN not in self.flows:
            goodput = goodput_mbps(self.flows, path_rates_bps(self.summary))[GOODPUT_COLUMN]
            self.flows = self.flows.assign(goodput_mbps=goodput)  # aligned on the index

    @property
    def backend(self) -> str:
        return str(self.summary["backend"]["name"])

    def save(self, directory: str | Path) -> Path:
        """Write into `directory`, replacing an earlier result there (never anything else: only
        a directory with tcpeval's manifest, or an empty one).

        The files are written into a fresh directory beside the target which is then swapped
        into place, so a killed run leaves the old result or the new one, never half of one.
        """
        target = Path(directory)
        _refuse_foreign(target)
        publish_directory(target, self.write_into, kind=RESULT_KIND)
        return target

    def write_into(self, directory: Path) -> None:
        """Write the result's files into an existing directory."""
        summary = json.dumps(self.summary, indent=2, sort_keys=True, allow_nan=False)
        (directory / SUMMARY_FILE).write_text(summary + "\n")
        self.flows.to_parquet(directory / FLOWS_FILE, index=False)
        self.links.to_parquet(directory / LINKS_FILE, index=False)
        if self.pcap is not None:
            (directory / PCAP_FILE).write_bytes(self.pcap)


RESULT_KIND = "result"


class DamagedResult(ValueError):
    """A result directory whose files are not as they were written; the text names it."""


def load(directory: str | Path) -> Result:
    """Read a result directory written by `Result.save`; raises DamagedResult naming the
    directory and the file when one is missing, truncated or altered."""
    source = Path(directory)
    problem = damage(source) if (source / MANIFEST_FILE).exists() else None
    if problem is not None:
        raise DamagedResult(f"{source}: {problem}")
    pcap = source / PCAP_FILE
    try:
        return Result(
            summary=json.loads((source / SUMMARY_FILE).read_text()),
            flows=pd.read_parquet(source / FLOWS_FILE),
            links=pd.read_parquet(source / LINKS_FILE),
            pcap=pcap.read_bytes() if pcap.exists() else None,
        )
    except (OSError, ValueError) as error:  # a result saved before manifests, damaged since
        raise DamagedResult(f"{source}: cannot be read: {' '.join(str(error).split())}") from None


def _refuse_foreign(target: Path) -> None:
    """Only an earlier result (tcpeval's manifest says so) or an empty directory may be
    replaced: `--out ~/photos` must never delete anything."""
    if not target.exists():
        return
    if target.is_dir() and not any(target.iterdir()):
        return
    manifest = read_manifest(target) if target.is_dir() else None
    if manifest is None or manifest.get("tcpeval") != RESULT_KIND:
        raise FileExistsError(
            f"--out: '{target}' exists and is not a tcpeval result (it has no {MANIFEST_FILE}); "
            "not replacing it: choose another directory"
        )
