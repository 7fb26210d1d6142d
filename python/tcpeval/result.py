"""A result: the summary and time series every backend returns, saved as JSON and Parquet.

Layout of a result directory (layout.py): `summary.json`, `flows.parquet` (one row per flow per
sample), `links.parquet` (one row per link direction per sample) and, when the scenario
captured a link, `capture.pcap`. The summary satisfies `summary.Summary`, checked whenever a
Result is made or loaded, so every consumer may rely on it whichever backend ran.
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
    PCAP_FILE,
    RESULT_FILES,
    SUMMARY_FILE,
    publish_directory,
)
from tcpeval.summary import Summary

# The columns every backend's time series carry (docs/contract.md), named once, in the core; a
# backend may add more.
FLOW_COLUMNS: tuple[str, ...] = tuple(_core.FLOW_COLUMNS)
LINK_COLUMNS: tuple[str, ...] = tuple(_core.LINK_COLUMNS)
ALGORITHM_COLUMN = "cc"
"""Added to every result's flows after FLOW_COLUMNS: the flow's algorithm, from the summary."""


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

    @property
    def backend(self) -> str:
        return str(self.summary["backend"]["name"])

    def save(self, directory: str | Path) -> Path:
        """Write into `directory`, replacing an earlier result there (never anything else).

        The files are written into a fresh directory beside the target which is then renamed
        into place, so a killed run leaves the old result or the new one, never half of one.
        """
        target = Path(directory)
        _refuse_foreign(target)
        publish_directory(target, self.write_into)
        return target

    def write_into(self, directory: Path) -> None:
        """Write the result's files into an existing directory."""
        summary = json.dumps(self.summary, indent=2, sort_keys=True, allow_nan=False)
        (directory / SUMMARY_FILE).write_text(summary + "\n")
        self.flows.to_parquet(directory / FLOWS_FILE, index=False)
        self.links.to_parquet(directory / LINKS_FILE, index=False)
        if self.pcap is not None:
            (directory / PCAP_FILE).write_bytes(self.pcap)


def load(directory: str | Path) -> Result:
    """Read a result directory written by `Result.save`."""
    source = Path(directory)
    pcap = source / PCAP_FILE
    return Result(
        summary=json.loads((source / SUMMARY_FILE).read_text()),
        flows=pd.read_parquet(source / FLOWS_FILE),
        links=pd.read_parquet(source / LINKS_FILE),
        pcap=pcap.read_bytes() if pcap.exists() else None,
    )


def _refuse_foreign(target: Path) -> None:
    """Only an earlier result (its files and plots) may be replaced, never anything else."""
    if not target.exists():
        return
    ours = target.is_dir() and all(
        entry.name in RESULT_FILES or entry.suffix == ".png" for entry in target.iterdir()
    )
    if not ours:
        raise FileExistsError(f"'{target}' exists and is not a tcpeval result; not replacing it")
