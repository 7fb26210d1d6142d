"""Writing TOML: the grid as run (its base inlined) into the sweep directory, and axis values
as they would be written in a grid file.

Only what a grid holds: tables, arrays of tables, strings, numbers, booleans, arrays and
inline tables. There is no TOML null, so None is refused.
"""

from __future__ import annotations

import json
import re
from typing import Any

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def dumps(document: dict[str, Any]) -> str:
    """A TOML document whose `tomllib.loads` is `document` again."""
    return "\n".join(_table_lines(document, ())) + "\n"


def value_text(value: object) -> str:
    """One value in TOML syntax: `"10Mbps"`, `0.01`, `true`, `{ name = "htcp" }`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, list):
        return "[" + ", ".join(value_text(item) for item in value) + "]"
    if isinstance(value, dict):
        pairs = ", ".join(f"{key_text(key)} = {value_text(item)}" for key, item in value.items())
        return "{ " + pairs + " }" if pairs else "{}"
    raise TypeError(f"{value!r} has no TOML form")


def key_text(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else json.dumps(key, ensure_ascii=False)


def _table_lines(table: dict[str, Any], path: tuple[str, ...]) -> list[str]:
    """`key = value` lines of `table`, then its sub-tables and arrays of tables."""
    lines = [
        f"{key_text(key)} = {value_text(value)}"
        for key, value in table.items()
        if not _is_table(value) and not _is_table_array(value)
    ]
    for key, value in table.items():
        header = ".".join(key_text(part) for part in (*path, key))
        if _is_table(value):
            lines += ["", f"[{header}]", *_table_lines(value, (*path, key))]
        elif _is_table_array(value):
            for item in value:
                lines += ["", f"[[{header}]]", *_table_lines(item, (*path, key))]
    return lines


def _is_table(value: object) -> bool:
    return isinstance(value, dict)


def _is_table_array(value: object) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)
