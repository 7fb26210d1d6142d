"""A result: the summary and time series every backend returns, saved as JSON and Parquet.

Layout of a result directory (ARCHITECTURE.md, "Result contract"): `summary.json`,
`flows.parquet` (one row per flow per sample), `links.parquet` (one row per link direction per
sample) and, when the scenario captured a link, `capture.pcap`.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

SUMMARY_FILE = "summary.json"
FLOWS_FILE = "flows.parquet"
LINKS_FILE = "links.parquet"
PCAP_FILE = "capture.pcap"
RESULT_FILES = (SUMMARY_FILE, FLOWS_FILE, LINKS_FILE, PCAP_FILE)

# The columns every backend's time series carry (docs/contract.md); a backend may add more.
FLOW_COLUMNS = (
    "t_s",
    "flow",
    "cwnd_pkts",
    "ssthresh_pkts",
    "srtt_ms",
    "inflight_pkts",
    "delivered_bytes",
    "retransmits",
    "pacing_rate_bps",
)
LINK_COLUMNS = ("t_s", "link", "queue_pkts", "drops", "tx_bytes")


@dataclass
class Result:
    summary: dict[str, Any]
    flows: pd.DataFrame
    links: pd.DataFrame
    pcap: bytes | None = None
    """The captured link's packets as a classic pcap file, if the scenario asked for one."""

    def save(self, directory: str | Path) -> Path:
        """Write into `directory`, replacing an earlier result there.

        The files are written into a fresh directory beside the target which is then renamed
        into place, so a killed run leaves the old result or the new one, never half of one.
        """
        target = Path(directory)
        _refuse_foreign(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
        try:
            self._write(staging)
            _swap_into_place(staging, target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return target

    def _write(self, directory: Path) -> None:
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


def _swap_into_place(staging: Path, target: Path) -> None:
    if not target.exists():
        staging.rename(target)
        return
    retired = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=target.parent))
    target.replace(retired / target.name)
    staging.rename(target)
    shutil.rmtree(retired)
