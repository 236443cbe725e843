"""Every relative link and image in README.md and docs/ points at a file that exists (a moved or renamed file breaks
this test, not a reader's click)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HTML_SOURCE = re.compile(r"<(?:img|a)\b[^>]*?\b(?:src|href)=\"([^\"]+)\"", re.IGNORECASE)
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)


def relative_targets(text: str) -> list[str]:
    """The relative link and image targets of a Markdown text, outside code blocks and without their anchors."""
    text = FENCE.sub("", text)
    text = re.sub(r"`[^`\n]*`", "", text)  # inline code
    found = []
    for target in [*LINK.findall(text), *HTML_SOURCE.findall(text)]:
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE) or target.startswith("#"):
            continue  # a URL (http:, mailto: …) or an anchor in the same page
        found.append(target.split("#", 1)[0])
    return found


def test_the_link_finder_sees_links_and_images_but_not_urls_anchors_or_code():
    text = (
        'See [the API](docs/API.md#words) and ![window](docs/images/w.png "The window").\n'
        "[web](https://example.org) [here](#install) `[not](a/link.md)`\n"
        '```\n[inside](code.md)\n```\n<img src="docs/images/x.png" width="400">\n'
    )
    assert relative_targets(text) == ["docs/API.md", "docs/images/w.png", "docs/images/x.png"]


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_image_points_at_a_file_that_exists(document):
    missing = [
        target
        for target in relative_targets(document.read_text(encoding="utf-8"))
        if not (document.parent / target).exists()
    ]
    assert missing == [], f"{document.relative_to(ROOT)} links to files that do not exist: {missing}"
