"""File names for bots and matches. Names are user input: a slug keeps only lower-case ASCII letters, digits,
``-``, ``_`` and ``.``, never starts with a dot, stays short, and is unique even on case-insensitive file systems.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable

MAX_LENGTH = 48
_UNSAFE = re.compile(r"[^a-z0-9._-]+")
# Names Windows refuses whatever the extension (a site may be copied there).
_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}


def slugify(name: str) -> str:
    """A safe file-name stem for ``name`` (possibly empty: see ``unique_slugs``)."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii").lower()
    slug = _UNSAFE.sub("-", ascii_name.replace("@", "-"))
    slug = re.sub(r"-{2,}", "-", slug).strip("-.")
    return slug[:MAX_LENGTH].rstrip("-.")


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]


def unique_slugs(names: Iterable[str]) -> dict[str, str]:
    """A slug for each distinct name. Names whose plain slug is empty, reserved or shared by another name all get
    a short hash of the name appended, so the result does not depend on the order of ``names``.
    """
    distinct = list(dict.fromkeys(names))
    plain = {name: slugify(name) for name in distinct}
    counts = Counter(plain.values())
    out: dict[str, str] = {}
    for name in distinct:
        slug = plain[name]
        if not slug or counts[slug] > 1 or slug.split(".")[0] in _RESERVED:
            slug = f"{slug}-{_digest(name)}" if slug else _digest(name)
        out[name] = slug
    if len(set(out.values())) < len(out):  # a plain slug that happens to look like another name's hashed one
        out = {name: f"{slug}-{hashlib.sha256(name.encode('utf-8')).hexdigest()[:16]}" for name, slug in out.items()}
    return out
