"""Untrusted text: the one path by which names, versions and other words that bots or operators chose reach a
terminal, a file name or a page.

* ``for_terminal`` shows every control character instead of sending it: C0 and C1 controls and DEL as ``\\x1b``,
  the Unicode direction controls (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C) as ``\\u202e``. No ANSI or
  OSC sequence, no forged line, no text reversed by a direction override reaches the operator.
* ``slug`` and ``file_name`` turn a name into a file-name component: lower-case ASCII letters, digits, ``-``, ``_``
  and ``.``, never ``.``/``..`` or a leading dot, never a path separator or NUL, short enough that the file system
  takes it (255 bytes), and a short hash of the name appended wherever the plain slug could collide.
* ``comment`` cleans a bot's decision comment (proto ``Action.comment``) as it arrives: at most ``COMMENT_MAX``
  characters, every control or direction character shown as an escape (``for_terminal``), so the stored text is one
  printable line wherever it goes (a page, a PHH comment, a terminal).
* ``check_length`` enforces the caps on what a bot says of itself and what an operator names it, the same in a
  Join, on the command line, in TOML and in a league's registry: a name, a version and an owner at most 64
  characters, a language 32.

* ``unknown_key`` says that a settings file's key is not known, the same way in every settings reader (a match's, a
  tournament's, a league's, the ratings'): the whole dotted key quoted, then the nearest known ones.

Pages escape HTML with the templates' autoescape; names there are isolated with ``<bdi>`` and their direction
controls made visible with ``visible_controls``.
"""

from __future__ import annotations

import difflib
import hashlib
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

NAME_MAX = 64
VERSION_MAX = 64
LANGUAGE_MAX = 32
OWNER_MAX = 64  # who a league's bot belongs to (arena bots add --owner)
COMMENT_MAX = 280  # a decision comment (proto Action.comment): a short note, never a channel for data
LIMITS = {"name": NAME_MAX, "version": VERSION_MAX, "language": LANGUAGE_MAX, "owner": OWNER_MAX}

DIRECTION_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
FILE_NAME_BYTES = 200  # well under the 255 bytes of ext4 and most file systems, with room for a suffix
SLUG_MAX = 48
_UNSAFE = re.compile(r"[^a-z0-9._-]+")
# Names Windows refuses whatever the extension (a site or an export may be copied there).
_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}


class TextLimitError(ValueError):
    """A name, version, language or owner longer than its cap; the message names the field and the limit."""


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 256 else f"\\u{code:04x}"


def _hidden(char: str) -> bool:
    """Whether a character must be shown as an escape: controls, direction marks, and anything not printable."""
    return char in DIRECTION_CONTROLS or not char.isprintable()


def for_terminal(text: object, limit: int | None = None) -> str:
    """``text`` safe for a terminal line: every control or direction character shown as an escape, never sent;
    cut to ``limit`` characters (with an ellipsis) when given."""
    value = str(text)
    # Printable text has nothing to escape (the direction controls are format characters, never printable)
    safe = value if value.isprintable() else "".join(_escape(c) if _hidden(c) else c for c in value)
    if limit is not None and len(safe) > limit:
        return safe[: max(limit - 1, 0)] + "…"
    return safe


def comment(text: str) -> str:
    """A bot's decision comment as the referee keeps it: surrounding blanks dropped, control and direction
    characters shown as escapes, cut to ``COMMENT_MAX`` characters (a longer one ends with an ellipsis)."""
    return for_terminal(text[: COMMENT_MAX * 2].strip(), COMMENT_MAX) if text else ""


def visible_controls(text: str) -> str:
    """``text`` with its direction and other control characters shown as escapes, line breaks and tabs kept (for
    pages: HTML escaping is the templates' job; this keeps an override from reversing what follows it)."""
    return "".join(_escape(c) if _hidden(c) and c not in "\n\r\t" else c for c in text)


def check_length(value: str, field: str, where: str = "") -> str:
    """``value`` if it is within the cap of ``field`` (name, version, language, owner); else a ``TextLimitError``."""
    limit = LIMITS[field]
    if len(value) > limit:
        place = f"{where}: " if where else ""
        raise TextLimitError(f"{place}a bot's {field} is at most {limit} characters, got {len(value)}: "
                             f"{for_terminal(value, 40)!r}")
    return value


def slugify(name: str) -> str:
    """A safe file-name stem for ``name`` (possibly empty: ``slug`` and ``unique_slugs`` then use a hash)."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii").lower()
    slug = _UNSAFE.sub("-", ascii_name.replace("@", "-"))
    slug = re.sub(r"-{2,}", "-", slug).strip("-.")
    return slug[:SLUG_MAX].rstrip("-.")


def digest(name: str, length: int = 8) -> str:
    """A short hash of ``name``: what keeps two names that slug alike apart."""
    return hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:length]


def slug(name: str) -> str:
    """One file-name component for ``name``: its plain slug when that is the name itself (already safe), else the
    slug with a short hash of the name appended (so ``A b``, ``a-b`` and ``../a b`` stay apart); never empty."""
    plain = slugify(name)
    if plain and plain == name and plain.split(".")[0] not in _RESERVED:
        return plain
    return f"{plain}-{digest(name)}" if plain else digest(name)


def unique_slugs(names: Iterable[str]) -> dict[str, str]:
    """A slug for each distinct name. Names whose plain slug is empty, reserved or shared by another name all get
    a short hash of the name appended, so the result does not depend on the order of ``names``.
    """
    distinct = list(dict.fromkeys(names))
    plain = {name: slugify(name) for name in distinct}
    counts = Counter(plain.values())
    out: dict[str, str] = {}
    for name in distinct:
        stem = plain[name]
        if not stem or counts[stem] > 1 or stem.split(".")[0] in _RESERVED:
            stem = f"{stem}-{digest(name)}" if stem else digest(name)
        out[name] = stem
    if len(set(out.values())) < len(out):  # a plain slug that happens to look like another name's hashed one
        out = {name: f"{stem}-{digest(name, 16)}" for name, stem in out.items()}
    return out


def file_name(*parts: str, suffix: str = "") -> str:
    """One file name from several names (``file_name(match_id, "r0", bot, suffix=".log")``): each part slugged,
    joined by ``-``, cut to the file system's limit with a hash of the whole kept, so it is always unique and
    never too long."""
    stem = "-".join(slug(p) for p in parts)
    if len(stem.encode("ascii")) + len(suffix) > FILE_NAME_BYTES:
        tag = digest("\0".join(parts), 12)
        stem = stem[: FILE_NAME_BYTES - len(suffix) - len(tag) - 1].rstrip("-.") + "-" + tag
    return stem + suffix


def path_inside(folder: Path, *names: str, suffix: str = "") -> Path:
    """``folder`` / one component per name (each slugged, the last with ``suffix``), checked to lie inside
    ``folder``: nothing a name says (``../``, an absolute path, NUL) can place a file elsewhere."""
    if not names:
        return folder
    parts = [file_name(n) for n in names[:-1]] + [file_name(names[-1], suffix=suffix)]
    path = folder.joinpath(*parts)
    root = folder.resolve()
    if root not in path.resolve().parents:
        raise ValueError(f"{for_terminal('/'.join(names))!r} would leave {root}")
    return path


def unknown_key(where: str, key: str, known: Iterable[str], section: str = "", nearest: int = 2) -> str:
    """The message for ``key`` (in ``section``, if a table of its own) of a settings file, ``where``, that is not one
    of ``known``: the nearest known keys, or all of them when none is near."""
    keys = sorted(known)
    near = difflib.get_close_matches(key, keys, n=nearest, cutoff=0.6)
    full = f"{section}.{key}" if section else key
    hint = f"; did you mean {' or '.join(near)}?" if near else f"; the keys are: {', '.join(keys)}"
    return f"{where}: unknown key {for_terminal(repr(full), 200)}{hint}"
