"""Losses and the sender's answer to them: loss, retransmission and congestion-event rates."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def loss_rate(summary: Mapping[str, Any]) -> float:
    """Packets dropped at the bottleneck per data packet sent by all flows.

    bottleneck.drops (queue, random and induced) / Σ flows' packets_sent (retransmissions
    included): the packet loss rate of RFC 5166 §2.3.
    """
    sent = sum(flow["packets_sent"] for flow in summary["flows"])
    if sent == 0:
        raise ValueError("no packets were sent")
    return summary["bottleneck"]["drops"] / sent


def retransmission_rate(flow_summary: Mapping[str, Any]) -> float:
    """A flow's retransmitted packets per data packet sent: retransmits / packets_sent.

    The "overhead" of Li's thesis in its simplest form (docs/methodology.md §3.11).
    """
    return flow_summary["retransmits"] / _packets_sent(flow_summary)


def congestion_event_rate(flow_summary: Mapping[str, Any]) -> float:
    """A flow's congestion events (window reductions) per data packet sent.

    The p of the response functions and of the Mathis and PFTK models, which count loss
    indications, not lost packets (docs/methodology.md §3.11, §4; RFC 5166 §2.3 "congestion
    event"): plot (congestion_event_rate, goodput) against models.py.
    """
    return flow_summary["congestion_events"] / _packets_sent(flow_summary)


def _packets_sent(flow_summary: Mapping[str, Any]) -> int:
    sent = flow_summary["packets_sent"]
    if sent == 0:
        raise ValueError(f"flow {flow_summary['id']} sent no packets")
    return sent
