"""The probe as a backend: a scenario's flow group run as real kernel streams to a
`tcpeval-probe serve` on loopback, refused by name where a real path cannot honour a key."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

import tcpeval
from helpers import small_scenario
from tcpeval.backends import probe
from tcpeval.lab.netns import read_line
from tcpeval.probe.binary import probe_binary
from tcpeval.probe.netns import secret_file
from tcpeval.scenario import ScenarioError


@pytest.fixture
def loopback_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A probe server on 127.0.0.1, named to the backend through its environment."""
    secret = secret_file(tmp_path)
    command = [
        str(probe_binary()),
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--secret-file",
        str(secret),
    ]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        address = read_line(server, timeout_s=5).removeprefix("listening on ").strip()
        assert address.startswith("127.0.0.1:"), address
        monkeypatch.setenv(probe.SERVER, address)
        monkeypatch.setenv(probe.SECRET_FILE, str(secret))
        yield address
    finally:
        server.kill()
        server.wait(timeout=10)
        for pipe in (server.stdout, server.stderr):
            assert pipe is not None
            pipe.close()


def _scenario() -> dict:
    data = small_scenario() | {"duration": "2s"}
    data["bottleneck"] = {"rate": "10Mbps"}
    data["flow"][0] |= {"cc": "cubic", "count": 2, "window": "256KB"}
    return data


def test_a_scenario_runs_as_kernel_streams_with_their_histories(loopback_server: str) -> None:
    result = tcpeval.run(_scenario(), "probe")
    assert result.backend == "probe"
    assert [flow["cc"] for flow in result.summary["flows"]] == ["cubic", "cubic"]
    assert all(flow["goodput_mbps"] > 0 for flow in result.summary["flows"])
    granted = result.summary["backend"]["details"]["granted"]
    assert len(granted) == 2
    samples = result.flows.groupby("flow").size()
    assert (samples > 100).all()  # 2 s of 10 ms samples each


def test_keys_a_real_path_cannot_honour_are_refused_by_name(loopback_server: str) -> None:
    data = _scenario()
    data["bottleneck"]["loss"] = 0.01
    with pytest.raises(ScenarioError) as raised:
        tcpeval.run(data, "probe")
    assert raised.value.field == "bottleneck.loss"
    assert "(backend 'probe')" in str(raised.value)


def test_an_algorithm_the_kernel_lacks_is_refused_with_those_it_has(loopback_server: str) -> None:
    data = _scenario()
    data["flow"][0]["cc"] = "highspeed"
    with pytest.raises(ScenarioError, match=r"flow\[0\].cc: 'highspeed' is not an algorithm"):
        tcpeval.run(data, "probe")


def test_without_a_server_the_backend_says_what_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(probe.SERVER, raising=False)
    with pytest.raises(ScenarioError, match=probe.SERVER):
        tcpeval.run(_scenario(), "probe")
