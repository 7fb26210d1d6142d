"""The advice in machine-readable form: what `diagnose --verify` can apply to the test
connections (socket options, streams, a congestion control) and which host sysctls would
lift the limit for every connection (docs/diagnose.md, "Checking the advice").

Derived from the verdict's limit and the evidence, with the sizes the advice's text states
(diagnose/advice.py: a buffer of twice the BDP, streams over Mathis's per-stream rate).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from tcpeval.diagnose.advice import DEFAULT_INITIAL_BYTES, advised_buffer_bytes, loss_streams
from tcpeval.diagnose.evidence import Evidence

Setting = Literal["window", "streams", "cc"]
End = Literal["near", "far"]


class Remedy(BaseModel):
    """One change to the TCP test, as a TcpSettings field and its value."""

    setting: Setting
    value: str | int
    why: str


class HostSysctl(BaseModel):
    """A sysctl the advice names, on the end that needs it (near: this host)."""

    end: End
    key: str
    value: str


class Remedies(BaseModel):
    per_connection: list[Remedy]
    host: list[HostSysctl]
    # What the advice asks that cannot be applied to a test connection, and why.
    not_applied: list[str]


def remedies(limit: str, e: Evidence, predictions: dict[str, float]) -> Remedies:
    """What lifts `limit`, for a transfer from this host (the sender) to the far end."""
    if limit == "receiver_window":
        size = advised_buffer_bytes(e)
        return Remedies(
            per_connection=[_window(size, "SO_RCVBUF (and SO_SNDBUF) for twice the BDP")],
            host=_buffer_sysctls("far", "rmem", size),
            not_applied=[],
        )
    if limit == "send_buffer":
        size = advised_buffer_bytes(e)
        return Remedies(
            per_connection=[_window(size, "SO_SNDBUF (and SO_RCVBUF) for twice the BDP")],
            host=_buffer_sysctls("near", "wmem", size),
            not_applied=[],
        )
    if limit == "path_loss":
        return _loss_remedies(e, predictions)
    return Remedies(
        per_connection=[],
        host=[],
        not_applied=[f"{limit}: nothing in its advice is a setting of one connection"],
    )


def _window(size: int, why: str) -> Remedy:
    return Remedy(setting="window", value=f"{size}B", why=why)


def _buffer_sysctls(end: End, kind: str, size: int) -> list[HostSysctl]:
    initial = DEFAULT_INITIAL_BYTES[kind]
    return [
        HostSysctl(end=end, key=f"net.core.{kind}_max", value=str(size)),
        HostSysctl(end=end, key=f"net.ipv4.tcp_{kind}", value=f"4096 {initial} {size}"),
    ]


def _loss_remedies(e: Evidence, predictions: dict[str, float]) -> Remedies:
    streams = loss_streams(e)
    applied = [Remedy(setting="streams", value=streams, why="parallel streams over Mathis's rate")]
    if predictions:
        best = max(predictions, key=lambda cc: predictions[cc])
        applied.append(Remedy(setting="cc", value=best, why="the simulator's best stack"))
    return Remedies(
        per_connection=applied,
        host=[],
        not_applied=[
            "pacing: the advice names no rate to pace at",
            "a larger MTU: the path's, not a connection's",
        ],
    )
