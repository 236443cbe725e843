"""Keeping a package document's ``refines`` whole when elements leave it.

EPUB 3 metadata describes other elements through ``refines="#id"`` (``<meta refines="#smil-1"
property="media:duration">``, a creator's role or file-as, a narrator's name for one overlay): an element that refines
an id no longer in the package is an error (EPUBCheck RSC-005 "@refines missing target id"). What the read-along
export removes (the book's own overlays, their audio and narrators, the authors it replaces) takes what refines it
along, and what refines that in turn.
"""

from __future__ import annotations


def drop_refinements(root, removed: set[str]) -> set[str]:
    """Remove from ``root`` every element that refines one of the ``removed`` ids, and, in turn, those that refine
    the elements removed so; returns the ids that are gone (``removed`` and those elements' own)."""
    gone = set(removed)
    pending = set(removed)
    while pending:
        found = [
            node
            for node in root.iter()
            if isinstance(node.tag, str) and _target(node.get("refines")) in pending and node.getparent() is not None
        ]
        pending = set()
        for node in found:
            ident = node.get("id")
            if ident and ident not in gone:
                gone.add(ident)
                pending.add(ident)
            node.getparent().remove(node)
    return gone


def _target(refines: str | None) -> str | None:
    """The id a ``refines`` value names (``#id``; ``None`` for another kind of reference)."""
    value = (refines or "").strip()
    return value[1:] if value.startswith("#") and len(value) > 1 else None
