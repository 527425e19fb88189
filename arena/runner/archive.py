"""A hosted bot's code: its folder as an archive (a tar file, gzip-compressed or not), checked before anything of it
touches a disk, stored by its SHA-256, and unpacked where the bot's sandbox binds it.

What an archive may hold, each refusal naming the member and the reason (``ArchiveRefused``):

* files and folders only: no symbolic or hard link (it could name any file of the host, or another bot's), no
  device, no pipe;
* relative paths that stay inside the folder: no absolute path, no ``..`` part, no empty or NUL-holding name;
* at most ``MAX_MEMBERS`` members, and at most ``max_unpacked`` bytes unpacked (a small compressed archive of
  zeros would otherwise fill the disk; reading stops at the first member past the cap).

Unpacked files get modes 0644 (0755 when the archive marks them executable) and folders 0755, whatever the
archive says, so that the bot's unprivileged uid can read them and nothing is set-uid; a folder is unpacked beside
its final place and renamed into it, so a half-unpacked folder is never used.

The store (``SubmissionStore``) keeps each archive as ``archives/<sha256>.tar``: written to a temporary file,
flushed to the disk (fsync), then renamed into place and the folder flushed, so a host killed at any moment keeps
every archive whole or not at all. ``unpacked/<sha256>/`` are the bots' folders, made from the archives when first
needed (a host's, or a Ray node's own cache).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import secrets
import shutil
import tarfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath

MB = 1024 * 1024
MAX_MEMBERS = 10_000
MAX_NAME = 1024  # characters of a member's path
DEFAULT_MAX_UNPACKED = 512 * MB
SKIPPED = ("__pycache__", ".git", ".venv", "node_modules/.cache")  # what ``pack`` leaves out of a folder


class ArchiveRefused(ValueError):
    """An archive that is not a bot's folder as the module says it must be: the message names the member and why."""


def digest(data: bytes) -> str:
    """The SHA-256 of an archive, hex: its name in every store."""
    return hashlib.sha256(data).hexdigest()


def pack(folder: Path) -> bytes:
    """``folder`` as a gzip-compressed tar archive, its members relative to it, in name order, without times or
    owners (the same folder packs to the same bytes, so to the same hash). Symbolic links are packed as links, for
    the host to refuse with a reason; ``__pycache__`` and ``.git`` folders are left out."""
    folder = folder.resolve()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT, compresslevel=6) as tar:
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(folder).as_posix()
            if any(relative == s or relative.startswith(s + "/") or f"/{s}/" in f"/{relative}/" for s in SKIPPED):
                continue
            info = tar.gettarinfo(str(path), arcname=relative)
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            if info.isfile():
                with path.open("rb") as f:
                    tar.addfile(info, f)
            else:
                tar.addfile(info)
    data = bytearray(buffer.getvalue())
    data[4:8] = bytes(4)  # gzip's own time stamp: none
    return bytes(data)


def _refuse(member: tarfile.TarInfo | str, why: str) -> ArchiveRefused:
    name = member.name if isinstance(member, tarfile.TarInfo) else member
    return ArchiveRefused(f"archive member {name[:200]!r}: {why}: refused")


def _relative(member: tarfile.TarInfo) -> PurePosixPath:
    """The member's path, checked to stay inside the bot's folder."""
    name = member.name
    if not name or "\x00" in name or len(name) > MAX_NAME:
        raise _refuse(member, f"a name must be 1 to {MAX_NAME} characters without NUL")
    if name.startswith("/") or PurePosixPath(name).is_absolute():
        raise _refuse(member, "an absolute path, which would climb out of the bot's folder")
    path = PurePosixPath(name)
    if ".." in path.parts:
        raise _refuse(member, "a path with '..', which would climb out of the bot's folder")
    parts = [p for p in path.parts if p not in ("", ".")]
    if not parts:
        raise _refuse(member, "a path that names the folder itself")
    return PurePosixPath(*parts)


def members(data: bytes, max_unpacked: int = DEFAULT_MAX_UNPACKED) -> list[tuple[tarfile.TarInfo, PurePosixPath]]:
    """Every member of an archive with its checked path, or ``ArchiveRefused`` for the first that breaks a rule (see
    the module)."""
    total = 0
    out: list[tuple[tarfile.TarInfo, PurePosixPath]] = []
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
            for member in tar:
                if len(out) >= MAX_MEMBERS:
                    raise ArchiveRefused(f"the archive holds more than {MAX_MEMBERS:,} members: refused")
                if member.issym() or member.islnk():
                    kind = "a symbolic link" if member.issym() else "a hard link"
                    raise _refuse(member, f"{kind} (to {member.linkname[:200]!r}), which could reach outside the "
                                          "bot's folder; an archive holds files and folders only")
                if not (member.isfile() or member.isdir()):
                    raise _refuse(member, "neither a file nor a folder (a device or a pipe)")
                path = _relative(member)
                total += member.size if member.isfile() else 0
                if total > max_unpacked:
                    raise ArchiveRefused(f"the archive unpacks to more than {max_unpacked / MB:g} MB (at member "
                                         f"{member.name[:200]!r}): refused")
                out.append((member, path))
    except tarfile.ReadError:  # (its text lists every compression tarfile tried: "- method gz: ReadError(...)")
        raise ArchiveRefused("not a tar archive (gzip-compressed or not) of the bot's folder: refused") from None
    except tarfile.TarError as exc:
        raise ArchiveRefused(f"not a tar archive (gzip-compressed or not) of the bot's folder ({exc}): refused"
                             ) from None
    except (EOFError, OSError, ValueError) as exc:
        if isinstance(exc, ArchiveRefused):
            raise
        raise ArchiveRefused(f"the archive is damaged: {exc}") from None
    if not out:
        raise ArchiveRefused("the archive is empty: refused")
    return out


def unpack(data: bytes, dest: Path, max_unpacked: int = DEFAULT_MAX_UNPACKED) -> Path:
    """Check the archive (``members``), then unpack it into a new folder beside ``dest`` and rename that into place
    (``dest`` must not exist); the files readable by anyone, none set-uid (see the module)."""
    checked = members(data, max_unpacked)
    staging = dest.with_name(f".unpacking-{dest.name}-{secrets.token_hex(4)}")
    staging.mkdir(mode=0o755, parents=False)
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
            for member, path in checked:
                try:
                    _extract(tar, member, staging.joinpath(*path.parts))
                except (FileExistsError, NotADirectoryError):
                    raise _refuse(member, "a path the archive names twice (or as a file and a folder)") from None
        staging.chmod(0o755)
        try:
            staging.rename(dest)
        except OSError:
            if not dest.is_dir():
                raise
            shutil.rmtree(staging, ignore_errors=True)  # another unpacked the same archive meanwhile
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return dest


def _extract(tar: tarfile.TarFile, member: tarfile.TarInfo, target: Path) -> None:
    """One checked member at ``target``, with the module's modes."""
    if member.isdir():
        target.mkdir(mode=0o755, parents=True, exist_ok=True)
        target.chmod(0o755)
        return
    target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
    source = tar.extractfile(member)
    if source is None:
        raise _refuse(member, "its content cannot be read")
    with source, open(target, "xb") as out:
        shutil.copyfileobj(source, out)
    target.chmod(0o755 if member.mode & 0o111 else 0o644)


def write_durably(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that a crash at any moment leaves the whole file or none: a temporary file
    beside it, flushed to the disk, renamed into place, the folder flushed."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.partial")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.rename(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
    folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


class StoreError(RuntimeError):
    """A store that cannot give an archive back: missing, or not the bytes its name says."""


class SubmissionStore:
    """Archives by SHA-256, and the folders unpacked from them (see the module)."""

    def __init__(self, root: Path, max_unpacked: int = DEFAULT_MAX_UNPACKED) -> None:
        self.root = root
        self.archives = root / "archives"
        self.unpacked = root / "unpacked"
        self.max_unpacked = max_unpacked

    @classmethod
    def beside(cls, database: Path, max_unpacked: int = DEFAULT_MAX_UNPACKED) -> SubmissionStore:
        """A league's store: ``<database>.submissions``, beside its database."""
        return cls(database.with_name(database.name + ".submissions"), max_unpacked)

    def _make(self) -> None:
        for folder in (self.root, self.archives, self.unpacked):
            folder.mkdir(mode=0o700, exist_ok=True)
        self.unpacked.chmod(0o711)  # the bots' sandboxes bind their own folder only; nobody lists the others

    def path(self, sha256: str) -> Path:
        """Where the archive of that hash is kept."""
        if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
            raise StoreError(f"{sha256[:80]!r} is not a SHA-256 (64 hex digits)")
        return self.archives / f"{sha256}.tar"

    def put(self, data: bytes) -> str:
        """Keep an archive (durably: see ``write_durably``); its hash. One already kept is not written again."""
        self._make()
        sha256 = digest(data)
        path = self.path(sha256)
        if not path.exists():
            write_durably(path, data)
        return sha256

    def has(self, sha256: str) -> bool:
        """Whether the archive of that hash is kept here."""
        return self.path(sha256).is_file()

    def read(self, sha256: str) -> bytes:
        """The archive of that hash, checked against it (``StoreError`` when it is missing or changed)."""
        path = self.path(sha256)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise StoreError(f"the submission {sha256} is not in {self.archives}: {exc.strerror}") from None
        if digest(data) != sha256:
            raise StoreError(f"{path} is not the archive its name says (its SHA-256 differs): changed on the disk")
        return data

    def folder(self, sha256: str, fetch: Callable[[], bytes] | None = None) -> Path:
        """The bot's folder unpacked from the archive of that hash: here already, or unpacked now from the store's
        archive (or from ``fetch()``'s bytes, kept first: a Ray node's cache), checked against the hash."""
        self._make()
        dest = self.unpacked / self.path(sha256).stem
        if dest.is_dir():
            return dest
        if not self.has(sha256) and fetch is not None:
            data = fetch()
            if digest(data) != sha256:
                raise StoreError(f"the archive fetched for {sha256} is not it (its SHA-256 differs)")
            self.put(data)
        return unpack(self.read(sha256), dest, self.max_unpacked)


__all__ = ["ArchiveRefused", "StoreError", "SubmissionStore", "digest", "members", "pack", "unpack",
           "write_durably"]
