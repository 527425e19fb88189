"""What a publish wrote, so that the next one writes only what changed: a writer that remembers its files and each
finished match's key, the manifest it leaves in the site's folder, and the reuse of a finished match's files from an
earlier publish when its key is unchanged (a league's periodic publish)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MANIFEST = ".arena-publish.json"


class Writer:
    """Writes files under the output folder and remembers them for the manifest, and each finished match's files
    with the key they were made with."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.files: list[str] = []
        self.matches: dict[str, tuple[str, list[str]]] = {}  # slug -> (key, its files)
        self._folders: set[Path] = set()

    def path(self, relative: str) -> Path:
        self.files.append(relative)
        target = self.out / relative
        if target.parent not in self._folders:
            target.parent.mkdir(parents=True, exist_ok=True)
            self._folders.add(target.parent)
        return target

    def text(self, relative: str, content: str) -> None:
        self.path(relative).write_text(content, encoding="utf-8")


@dataclass(frozen=True, slots=True)
class Earlier:
    """What an earlier publish into ``folder`` wrote, from its manifest: its files, and each finished match's
    files with the key they were made with."""

    folder: Path
    files: list[str]
    matches: dict[str, tuple[str, list[str]]]


def manifest_of(files: list[str], matches: Mapping[str, tuple[str, list[str]]]) -> dict[str, Any]:
    """The files written, grouped by folder, and each finished match's key and files."""
    grouped: dict[str, list[str]] = {}
    for relative in sorted(files):
        folder, _, name = relative.rpartition("/")
        grouped.setdefault(folder, []).append(name)
    return {"files": grouped, "matches": {slug: {"key": key, "files": names}
                                          for slug, (key, names) in sorted(matches.items())}}


def _ungroup(grouped: object) -> list[str]:
    if isinstance(grouped, list):  # the first manifests: a plain list
        return [f for f in grouped if isinstance(f, str)]
    if not isinstance(grouped, dict):
        return []
    return [f"{folder}/{name}" if folder else name for folder, names in grouped.items()
            if isinstance(folder, str) and isinstance(names, list) for name in names if isinstance(name, str)]


def earlier_publish(folder: Path) -> Earlier | None:
    """The manifest an earlier publish left in ``folder``, None if there is none or it cannot be read. Written by
    us, but read as untrusted: nothing it names is used before it is checked (``remove_stale``, ``_reuse``)."""
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if isinstance(data, dict) and isinstance(data.get("files"), dict):
        matches: dict[str, tuple[str, list[str]]] = {}
        for slug, entry in (data.get("matches") or {}).items():
            if isinstance(entry, dict) and isinstance(entry.get("key"), str) and isinstance(entry.get("files"), list):
                matches[str(slug)] = (entry["key"], [f for f in entry["files"] if isinstance(f, str)])
        return Earlier(folder, _ungroup(data["files"]), matches)
    return Earlier(folder, _ungroup(data), {})  # before matches were kept: a manifest of files only


def _inside(root: Path, relative: str) -> Path | None:
    """``root / relative`` if it is a file inside ``root`` (whatever a manifest says), else None."""
    target = (root / relative).resolve()
    return target if root.resolve() in target.parents and target.is_file() else None


def remove_stale(earlier: Earlier | None, written: list[str]) -> None:
    """Delete files an earlier run wrote (per its manifest) that this run did not write again."""
    if earlier is None:
        return
    keep = set(written)
    for relative in earlier.files:
        if relative not in keep and (target := _inside(earlier.folder, relative)) is not None:
            target.unlink()


def _owned(slug: str, relative: str) -> bool:
    """Whether ``relative`` is one of the files a match's own: its pages, its data, its chip graph."""
    return (relative in (f"matches/{slug}.html", f"plots/matches/{slug}.svg")
            or relative.startswith(f"matches/{slug}/"))


def reuse(slug: str, writer: Writer, earlier: Earlier, key: str) -> bool:
    """Keep a finished match's files from an earlier publish (hard links, or copies, when it was in another
    folder) when they were made with the same key; False if they must be made."""
    kept = earlier.matches.get(slug)
    if kept is None or kept[0] != key or not all(_owned(slug, f) for f in kept[1]):
        return False
    sources = [_inside(earlier.folder, f) for f in kept[1]]
    if any(source is None for source in sources):
        return False
    same = earlier.folder.resolve() == writer.out.resolve()
    for relative, source in zip(kept[1], sources, strict=True):
        assert source is not None
        if same:
            writer.files.append(relative)
            continue
        target = writer.path(relative)
        target.unlink(missing_ok=True)
        try:
            os.link(source, target)
        except OSError:
            shutil.copyfile(source, target)
    writer.matches[slug] = (key, list(kept[1]))
    return True
