"""ScenarioError: one line naming the field and the bad value, from us or from pydantic.

Unions in the scenario tag their members `<like-this>`, so that error paths can leave the tags
out; a value that fits no member gives an error of type "choice" whose message is the reason.
"""

from __future__ import annotations

import json

from pydantic import ValidationError


class ScenarioError(Exception):
    """A scenario the user must fix; its text is one line naming the field and the bad value."""

    def __init__(self, field: str, value: object, reason: str) -> None:
        self.field, self.value, self.reason = field, value, reason
        quoted = "" if value is None else f"'{shown(value)}' "
        super().__init__(f"{_escaped(field)}: {quoted}{' '.join(reason.split())}")


SHOWN_CHARACTERS = 60


def shown(value: object) -> str:
    """A value as one short line: control characters escaped, and a long value cut with its
    length said."""
    text = _escaped(str(value))
    if len(text) <= SHOWN_CHARACTERS:
        return text
    return f"{text[:SHOWN_CHARACTERS]}… ({len(text):,} characters)"


def _escaped(text: str) -> str:
    """Control characters as escapes: a newline would break the one line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def from_validation_error(error: ValidationError) -> ScenarioError:
    """The first problem pydantic found, as one line."""
    first = error.errors()[0]
    field = _field_path(first["loc"])
    if first["type"] == "extra_forbidden":
        return ScenarioError(field, None, "unknown key")
    if first["type"] == "missing":
        return ScenarioError(field, None, "missing (required)")
    if first["type"] == "choice":
        return ScenarioError(field, first["input"], first["msg"])
    if first["type"] == "value_error":
        return ScenarioError(field, first["input"], str(first["ctx"]["error"]))
    if first["type"] == "model_type":
        return ScenarioError(field, first["input"], "must be a table")
    if first["type"] == "too_short":
        return ScenarioError(field, None, f"needs at least {first['ctx']['min_length']} entry")
    message = first["msg"]
    return ScenarioError(field, first["input"], f"is invalid: {message[0].lower()}{message[1:]}")


def _field_path(loc: tuple[int | str, ...]) -> str:
    """`flow[0].rtt` from pydantic's location, leaving out the `<tags>` of unions; a key TOML
    could not write bare (an empty one, one with a space) quoted as TOML quotes it."""
    parts = [part for part in loc if not (isinstance(part, str) and part.startswith("<"))]
    path = "".join(f"[{part}]" if isinstance(part, int) else f".{_key(part)}" for part in parts)
    return path.removeprefix(".") or "scenario"


def _key(name: str) -> str:
    """A key as TOML writes it: bare if it can be (A-Z a-z 0-9 _ -), else quoted."""
    bare = name and all(c.isascii() and (c.isalnum() or c in "_-") for c in name)
    return name if bare else json.dumps(name)
