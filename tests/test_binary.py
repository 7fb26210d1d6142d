"""Finding the project's binaries: a path the user names wins or fails alone, and a missing
binary is one error saying where it was looked for and how to get it for this checkout.
(The installed wheel's side is in test_wheel.py.)"""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from tcpeval.probe.binary import MissingBinaryError, env_var, find_binary

MISSING = "tcpeval-no-such-binary"


def test_a_named_binary_is_the_one_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    named = tmp_path / "my-probe"
    named.write_text("#!/bin/sh\n")
    named.chmod(named.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv(env_var("tcpeval-probe"), str(named))
    assert find_binary("tcpeval-probe") == named


def test_a_named_path_that_is_no_binary_is_refused_not_passed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TCPEVAL_PROBE", str(tmp_path / "absent"))
    with pytest.raises(MissingBinaryError) as error:
        find_binary("tcpeval-probe")
    assert str(error.value).startswith(f"TCPEVAL_PROBE={tmp_path / 'absent'}: not an executable")


def test_a_missing_binary_says_where_it_looked_and_how_a_checkout_gets_it() -> None:
    with pytest.raises(MissingBinaryError) as error:
        find_binary(MISSING)
    message = str(error.value)
    assert message.startswith(f"{MISSING} not found (looked in ")
    assert f"release/{MISSING}" in message  # Cargo's output, searched in a checkout only
    assert "source checkout" in message
    assert "`make demo`" in message
