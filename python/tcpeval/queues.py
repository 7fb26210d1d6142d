"""How each link's queue counted, stated in every result: `queue` in the summary's
`bottleneck` and in each of its `links`, from the scenario as resolved, whichever backend ran
it. The simulator and the lab's emulator apply the same resolved limit (crates/netem's
`Limit`); the model counts a byte limit in packets of the largest size (backends/model)."""

from __future__ import annotations

from typing import Any

from tcpeval.measurement import REVERSE_SUFFIX
from tcpeval.scenario import Scenario
from tcpeval.scenario.queue import accounting


def stated(summary: dict[str, Any], scenario: Scenario) -> dict[str, Any]:
    """The summary with `queue` (counts, limit_pkts, limit_bytes, packet_bytes) in each link
    direction of a declared link; a reverse direction has its link's queue."""
    queues = {
        entry["name"]: accounting(entry, scenario.crossing(entry["name"]).largest_packet_bytes)
        for entry in scenario.resolved_links()
    }

    def with_queue(link: dict[str, Any]) -> dict[str, Any]:
        queue = queues.get(link["name"].removesuffix(REVERSE_SUFFIX))
        return link if queue is None else link | {"queue": queue}

    summary = dict(summary)
    summary["links"] = [with_queue(link) for link in summary["links"]]
    if summary["bottleneck"] is not None:
        summary["bottleneck"] = with_queue(summary["bottleneck"])
    return summary
