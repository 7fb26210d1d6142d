"""Reading an ECN stack's behaviour in the kernel from a lab run: the window cuts in its
TCP_INFO samples, the marked fraction its sender saw, and the marks the emulator made."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from tcpeval.result import Result

# Linux's TCP_CA_* states as TCP_INFO reports them.
CA_OPEN, CA_CWR = 0, 2


def sender_samples(result: Result, start_s: float, end_s: float = math.inf) -> pd.DataFrame:
    """The one flow's samples from `start_s` to `end_s`, on the run's clock."""
    flows = result.flows.sort_values("t_s")
    return flows[(flows["t_s"] >= start_s) & (flows["t_s"] < end_s)].reset_index(drop=True)


def flow_start_s(result: Result) -> float:
    """When the flow's first sample was taken, on the run's clock."""
    return float(result.flows["t_s"].min())


def echo_cuts(samples: pd.DataFrame) -> pd.Series:
    """The fraction of the window each ECN reduction kept, indexed like `samples`: ssthresh
    just after it over cwnd just before (the samples either side). A reduction sets ssthresh
    anew, to the value it had or another, and cwnd down to it; one with a retransmission
    between the two samples, or in fast recovery, is a loss's. A sample can fall between the
    kernel's entering CWR and the stack's answer on the next ACK, with the ssthresh the
    kernel's call returned (crates/bpf/bpf/window.h: on this kernel sometimes a stale word,
    read as unknown, NaN); the answer is the next sample's."""
    before = samples.shift(1)
    ssthresh = samples["ssthresh_pkts"]
    new_ssthresh = ssthresh != before["ssthresh_pkts"]
    cwnd_fell = samples["cwnd_pkts"] < before["cwnd_pkts"]
    no_loss = samples["retransmits"] == before["retransmits"]
    echo_state = samples["ca_state"].isin([CA_OPEN, CA_CWR])
    answered = np.isfinite(ssthresh)
    kept = ssthresh / before["cwnd_pkts"]
    return kept[(new_ssthresh | cwnd_fell) & no_loss & echo_state & answered]


def growth_pkts_per_s(samples: pd.DataFrame) -> float:
    """How fast cwnd grows between reductions: the packets it gained over the samples with
    no new ssthresh and no fall, per second of those samples."""
    before = samples.shift(1)
    gained = samples["cwnd_pkts"] - before["cwnd_pkts"]
    between = (samples["ssthresh_pkts"] == before["ssthresh_pkts"]) & (gained >= 0)
    seconds = (samples["t_s"] - before["t_s"])[between].sum()
    return float(gained[between].sum() / seconds)


def marked_fraction(samples: pd.DataFrame) -> float:
    """F: of the packets the sender saw delivered in the samples' span, the share its kernel
    counted as acknowledged with an echo (tcpi_delivered_ce over tcpi_delivered)."""
    delivered = samples["delivered_pkts"].iloc[-1] - samples["delivered_pkts"].iloc[0]
    echoed = samples["delivered_ce_pkts"].iloc[-1] - samples["delivered_ce_pkts"].iloc[0]
    return float(echoed / delivered)


def forward_emulator(result: Result) -> dict:
    """The emulator's counters of the data direction (marks made, packets sent)."""
    return result.summary["backend"]["details"]["emulator"]["forward"]


def bpf_stack(result: Result) -> dict:
    """The one BPF stack the run registered, as the lab describes it."""
    (entry,) = result.summary["backend"]["details"]["bpf_stacks"].values()
    return entry
