"""The words people read: each error code of the engine, voices and narration turned into a sentence.

The layers below raise errors with a neutral ``code`` and ``data`` (:class:`core.engine.ChatterboxError`) and the
worker reports failures the same way (:class:`core.engine.Failed`, :class:`core.engine.ModelFailed`). Each front end
words them here, once: ``describe(code, data, front)`` with ``front`` one of ``"window"``, ``"cli"`` or ``"api"``.
Nothing below the front ends imports this package.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Literal

from core.wording.catalog import CATALOG, Words
from core.wording.review import REASON_WORDS, describe_reason, describe_reasons

Front = Literal["window", "cli", "api"]
FRONTS: tuple[Front, ...] = ("window", "cli", "api")
log = logging.getLogger(__name__)


def describe(code: str | None, data: Mapping[str, Any] | None = None, front: Front = "window") -> str:
    """The sentence for ``code`` with its ``data``, in the words of ``front``.

    An unknown code, or data the entry cannot use, gives a generic sentence that still names the code and the facts.
    """
    data = dict(data or {})
    words = CATALOG.get(code or "")
    if words is not None:
        text = words.for_front(front)
        try:
            return text(data) if callable(text) else text.format(**data)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError):
            log.warning("the wording of %s does not fit its data %r", code, data)
    return generic(code, data)


def generic(code: str | None, data: Mapping[str, Any]) -> str:
    """What is said for a code without wording: that it failed, and the technical facts."""
    facts = ", ".join(f"{key}: {value}" for key, value in data.items())
    return f"The operation failed ({code or 'unknown error'}{'; ' + facts if facts else ''})."


def describe_error(exc: BaseException, front: Front = "window") -> str:
    """The sentence for an exception: its code's wording for a coded error, else its own text."""
    code = getattr(exc, "code", None)
    data = getattr(exc, "data", None)
    if isinstance(code, str) and isinstance(data, dict):
        return describe(code, data, front)
    return str(exc) or type(exc).__name__


def describe_failure(event: Any, front: Front = "window") -> str:
    """The sentence for a worker event (``Failed``, ``ModelFailed``) or a failed segment (``error_code``)."""
    code = getattr(event, "code", None) or getattr(event, "error_code", None)
    data = getattr(event, "data", None) if getattr(event, "code", None) else getattr(event, "error_data", None)
    if code:
        return describe(code, data or {}, front)
    return str(getattr(event, "error", None) or "The operation failed.")


def describe_notice(notice: Any, front: Front = "window") -> str | None:
    """The sentence for a :class:`core.engine.Notice` (``None`` for no notice)."""
    if notice is None:
        return None
    return describe(notice.code, notice.data, front)


def has_wording(code: str) -> bool:
    return code in CATALOG


__all__ = [
    "CATALOG",
    "FRONTS",
    "REASON_WORDS",
    "Front",
    "Words",
    "describe",
    "describe_error",
    "describe_failure",
    "describe_notice",
    "describe_reason",
    "describe_reasons",
    "generic",
    "has_wording",
]
