"""The book's authors as its package document (OPF) names them, and naming another author there.

An EPUB names its people with ``dc:creator``: EPUB 2 gives each its role in ``opf:role``, EPUB 3 in a ``<meta
refines="#id" property="role">`` (MARC relator codes; ``display-seq`` orders them). The authors are the creators
whose role is ``aut``; a book that gives no creator that role: the creators without a role; a book whose every
creator has another role (an anthology's editor): all of them. Several authors are joined with
:data:`SEPARATOR`, in the book's order.
"""

from __future__ import annotations

from lxml import etree

DC_NS = "http://purl.org/dc/elements/1.1/"
OPF_NS = "http://www.idpf.org/2007/opf"
AUTHOR_ROLE = "aut"
SEPARATOR = " & "


def author_line(opf) -> str:
    """The book's authors as one line ("" when it names none)."""
    return SEPARATOR.join(" ".join("".join(node.itertext()).split()) for node in author_elements(opf))


def author_elements(opf) -> list:
    """The ``dc:creator`` elements that name the book's authors, in the book's order (duplicates left out)."""
    refined = _refinements(opf)
    people = []
    for index, node in enumerate(n for n in opf.iter() if _is_creator(n)):
        name = " ".join("".join(node.itertext()).split())
        if not name:
            continue
        about = refined.get(node.get("id") or "", {})
        roles = {r.lower() for r in about.get("role", [])}
        role = node.get(f"{{{OPF_NS}}}role") or node.get("role")
        if role:
            roles.add(role.strip().lower())
        order = next((int(s) for s in about.get("display-seq", []) if s.isdigit()), index)
        people.append((order, index, name, roles, node))
    people.sort(key=lambda p: (p[0], p[1]))
    chosen = [p for p in people if AUTHOR_ROLE in p[3]] or [p for p in people if not p[3]] or people
    seen: set[str] = set()
    out = []
    for _order, _index, name, _roles, node in chosen:
        if name not in seen:
            seen.add(name)
            out.append(node)
    return out


def replace_authors(opf, metadata, author: str) -> set[str]:
    """Name ``author`` as the book's author in its place: the author creators give way to one ``dc:creator``
    (where the first of them stood, role ``aut``); the others' creators (an illustrator, a translator) stay.
    Returns the ids of the elements removed (what refined them refines nothing now: the caller drops it)."""
    old = author_elements(opf)
    taken = {value for value in (e.get("id") for e in opf.iter() if isinstance(e.tag, str)) if value}
    ident = _free_id("cbx-author", taken)
    first = next((e for e in opf.iter() if any(e is o for o in old)), None)  # in the document, not display order
    creator = etree.Element(first.tag if first is not None else f"{{{DC_NS}}}creator")
    creator.set("id", ident)
    creator.text = author
    if first is not None:
        parent = first.getparent()
        parent.insert(parent.index(first), creator)
        creator.tail = first.tail
    else:
        metadata.append(creator)
    removed = set()
    for node in old:
        if node.get("id"):
            removed.add(node.get("id"))
        node.getparent().remove(node)
    role = etree.SubElement(metadata, f"{{{OPF_NS}}}meta" if etree.QName(metadata).namespace == OPF_NS else "meta")
    role.set("refines", f"#{ident}")
    role.set("property", "role")
    role.set("scheme", "marc:relators")
    role.text = AUTHOR_ROLE
    return removed


def _is_creator(node) -> bool:
    return (
        isinstance(node.tag, str) and etree.QName(node).namespace == DC_NS and etree.QName(node).localname == "creator"
    )


def _refinements(opf) -> dict[str, dict[str, list[str]]]:
    """Element id → property → the values of the ``<meta refines="#id">`` elements about it."""
    out: dict[str, dict[str, list[str]]] = {}
    for node in opf.iter():
        if not isinstance(node.tag, str) or etree.QName(node).localname != "meta":
            continue
        target, prop = (node.get("refines") or "").strip(), (node.get("property") or "").strip()
        if target.startswith("#") and prop:
            value = " ".join("".join(node.itertext()).split())
            out.setdefault(target[1:], {}).setdefault(prop, []).append(value)
    return out


def _free_id(ident: str, taken: set[str]) -> str:
    candidate, number = ident, 1
    while candidate in taken:
        number += 1
        candidate = f"{ident}-{number}"
    return candidate
