"""docs/methodology.md is what the code, the suites, the report and the simulator's tests cite:
every section they name exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parent.parent


def test_every_methodology_section_the_code_cites_exists() -> None:
    headings = re.findall(
        r"^#+ (\d+(?:\.\d+)?)\.? ", (ROOT / "docs/methodology.md").read_text(), re.M
    )
    sources = [*ROOT.glob("python/tcpeval/**/*.py"), *ROOT.glob("python/tcpeval/**/*.toml")]
    sources += [*ROOT.glob("python/tcpeval/**/*.j2"), *ROOT.glob("crates/**/*.rs")]
    cited = set()
    for path in sources:
        text = re.sub(r"(#|//[/!]?) ", "", " ".join(path.read_text().split()))
        for match in re.finditer(r"docs/methodology\.md((?:,? ?\(?§[\d.]+\)?)+)", text):
            cited |= set(re.findall(r"§(\d+(?:\.\d+)?)", match.group(1)))
    assert cited
    assert cited <= set(headings), sorted(cited - set(headings))
