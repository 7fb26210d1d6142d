from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from helpers import assert_packets_conserved
from tcpeval import _core


@pytest.fixture(autouse=True, scope="session")
def _every_simulation_conserves_packets() -> Iterator[None]:
    """Check packet conservation after every simulation run in the test process.

    Session-scoped so it wraps the core before any fixture simulates; runs in a subprocess
    check their summary.json with the same helper themselves.
    """
    run = _core.simulate

    def simulate_and_check(
        resolved_json: str, progress: object = None
    ) -> tuple[str, dict, dict, bytes | None]:
        summary_json, flows, links, pcap = run(resolved_json, progress)
        assert_packets_conserved(json.loads(summary_json)["sim"])
        return summary_json, flows, links, pcap

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_core, "simulate", simulate_and_check)
        yield
