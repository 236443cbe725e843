"""What a command says on stderr besides its result: a request's warnings and the provider notice, in words."""

from __future__ import annotations

import sys
from collections.abc import Iterable

from core.engine import Notice
from core.wording import describe_notice


def say_notices(warnings: Iterable[Notice], provider_notice: Notice | None) -> tuple[list[str | None], str | None]:
    """Print each warning and the provider notice (if any) on stderr; return their words for the JSON report."""
    words = [describe_notice(w, "cli") for w in warnings]
    for warning in words:
        print(f"warning: {warning}", file=sys.stderr)
    notice = describe_notice(provider_notice, "cli")
    if notice:
        print(f"notice: {notice}", file=sys.stderr)
    return words, notice
