"""What `tcpeval probe copy` prints: the copy's rate beside the memory-to-memory rate and both
ends' disk rates measured in the same run, one row per stream with its checksum, and which of
those rates limits the copy."""

from __future__ import annotations

from typing import Any

# A copy at this share of the slowest rate measured beside it runs at that rate's limit.
LIMITED_SHARE = 0.8


def _mbps(bps: float | None) -> str:
    return "-" if bps is None else f"{bps / 1e6:.1f} Mb/s"


def _disk_bps(report: dict[str, Any], end: str, mode: str) -> float | None:
    passes = (report.get(f"{end}_disk") or {}).get("passes") or []
    return passes[0][f"{mode}_bps"] if passes else None


def limits(report: dict[str, Any]) -> dict[str, float]:
    """The rates that bound the copy, by what they measure: the network (memory to memory),
    the disk it was read from and the disk it was written to."""
    reader, writer = ("server", "local") if report["direction"] == "get" else ("local", "server")
    ends = {"local": "this host's", "server": "the server's"}
    candidates = {
        "the network": (report.get("memory_to_memory") or {}).get("rate_bps"),
        f"{ends[reader]} disk reads": _disk_bps(report, reader, "read"),
        f"{ends[writer]} disk writes": _disk_bps(report, writer, "write"),
    }
    return {name: bps for name, bps in candidates.items() if bps}


def verdict(report: dict[str, Any]) -> str | None:
    """The slowest of the rates measured beside the copy, if the copy ran near it; else that
    none of them is the limit (the hosts' CPUs, the hashing, are what is left)."""
    measured = limits(report)
    if not measured:
        return None
    name, bps = min(measured.items(), key=lambda item: item[1])
    share = report["rate_bps"] / bps
    if share >= LIMITED_SHARE:
        return f"limited by {name}: the copy ran at {share:.0%} of their {_mbps(bps)}"
    return (
        f"limited by the hosts (CPU, hashing, page cache): the copy ran at {share:.0%} of the"
        f" slowest rate measured beside it, {name}"
    )


def copy_lines(report: dict[str, Any]) -> list[str]:
    """The printed table: the rates, then one row per stream with its checksum."""
    arrow = "←" if report["direction"] == "get" else "→"
    state = "verified" if report["committed"] else "NOT committed"
    seconds = {key: report[f"{key}_ns"] / 1e9 for key in ("data", "sync", "verify")}
    lines = [
        f"{report['local']} {arrow} {report['remote']} on {report['server']}: "
        f"{report['size_bytes']} bytes over {report['streams']} streams, {state}",
        f"  disk to disk      {_mbps(report['rate_bps']):>14}  data {seconds['data']:.2f} s,"
        f" fsync {seconds['sync']:.2f} s, read back {seconds['verify']:.2f} s",
    ]
    memory = report.get("memory_to_memory")
    if memory:
        lines.append(
            f"  memory to memory  {_mbps(memory['rate_bps']):>14}  {memory['duration_s']:.1f} s,"
            f" {memory['streams']} streams"
        )
    for end in ("local", "server"):
        for p in (report.get(f"{end}_disk") or {}).get("passes") or []:
            lines.append(
                f"  {end + ' disk':<17} write {_mbps(p['write_bps'])}, read {_mbps(p['read_bps'])}"
                f" ({p['bytes']} bytes, {p['block_bytes']}-byte blocks)"
            )
    resumed = sum(r["resumed_bytes"] for r in report["ranges"])
    if resumed:
        lines.append(f"  resumed: {resumed} bytes were already there (verified, not sent)")
    lines.append("  stream      offset        bytes           rate  sha256")
    for r in report["ranges"]:
        arrived = "?" if r["received_bytes"] is None else r["received_bytes"]
        digest = r["received_sha256"] or r["sent_sha256"] or "-"
        lines.append(
            f"  {r['stream']:>6} {r['offset_bytes']:>11} {arrived:>12} {_mbps(r['rate_bps']):>14}"
            f"  {digest}"
        )
    limit = verdict(report) if report["committed"] else None
    lines += [f"  {limit}"] if limit else []
    lines += [f"  warning: {w}" for w in report["warnings"]]
    return lines
