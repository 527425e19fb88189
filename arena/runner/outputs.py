"""Where arena writes (``--db``, ``--phh-dir``, ``--log-dir``, the demo's ``--out``), made before any bot starts.

A bot may read some host folders: its own, its toolchain's, arena's package, ``--sandbox-bind``. Every output that
lies inside one is covered in each sandbox (an empty folder or file in its place), but only if it exists when the
sandbox is built: a PHH folder inside a bot's own folder, made at the first finished hand after the sandboxes were
built, was not covered, and the other rotation read the first one's finished mirror hands (+20,734 mbb/hand). So
every output folder (and the folder of every output file) is made here, before any bot starts. An output that *is*
a folder a bot reads is refused: covering it would take the bot's own files (or arena's SDK) away from it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from arena.runner.bots import BotSpec
from arena.runner.sandbox import SandboxPolicy, readable_folders


class OutputError(ValueError):
    """An output that is itself a folder a bot reads (the message names the flag, the folder and the bot), or one
    whose folder cannot be made (a file in its way, no permission)."""

    def __init__(self, flag: str, message: str) -> None:
        super().__init__(message)
        self.flag = flag


def prepare_outputs(policy: SandboxPolicy, bots: Iterable[BotSpec], cwd: Path,
                    folders: Mapping[str, str | Path | None] | None = None,
                    files: Mapping[str, str | Path | None] | None = None) -> SandboxPolicy:
    """Refuse an output folder that is a folder a bot reads (``OutputError``), make every output folder (and each
    output file's folder) now, before any bot starts, and return the policy hiding them all from the bots."""
    outputs = [(flag, Path(path).absolute(), True) for flag, path in (folders or {}).items() if path is not None]
    outputs += [(flag, Path(path).absolute(), False) for flag, path in (files or {}).items() if path is not None]
    if policy.enabled:
        bots = list(bots)
        for flag, path, is_folder in outputs:
            if not is_folder:
                continue
            for bot in bots:
                for folder, why in readable_folders(policy, bot.command, cwd):
                    if folder in (path, path.resolve()):
                        raise OutputError(flag, (
                            f"{path} is {why.format(bot=bot.name)}: every sandbox covers an output folder with an "
                            "empty one, so that no bot reads what arena writes there, and the bots would lose what "
                            "they need; choose another folder"))
    for flag, path, is_folder in outputs:
        folder = path if is_folder else path.parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(flag, f"cannot make the folder {folder}: {_reason(exc, folder)}") from None
    return policy.hiding(*(path for _, path, _ in outputs))


def _reason(exc: OSError, folder: Path) -> str:
    """Why ``folder`` could not be made, in words: the file in its way, where that is the reason."""
    for parent in (folder, *folder.parents):
        if parent.exists() and not parent.is_dir():
            return f"{parent} is a file, not a folder"
    return exc.strerror or str(exc)
