"""Where arena writes (``--db``, ``--phh-dir``, ``--log-dir``, the demo's ``--out``), checked before any bot starts.

A bot may read some host folders: its own, its toolchain's, arena's package, ``--sandbox-bind``. An output inside one
of them is refused: what arena writes there during a match (finished hands, the database, the other bots' logs)
would be readable by a bot still playing, and by the other rotation of the same deals (a PHH folder inside a bot's
own folder, made at the first finished hand after the sandboxes were built, gave the second rotation the first one's
mirror hands: +20,734 mbb/hand). Every other output folder is made now, before any bot starts, so that each sandbox
is built with it in place (and covers it wherever a bound folder holds it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from arena.runner.bots import BotSpec
from arena.runner.sandbox import SandboxPolicy, readable_folders


class OutputError(ValueError):
    """An output that lies inside a folder a bot can read; the message names the flag, the folder and the bot."""

    def __init__(self, flag: str, message: str) -> None:
        super().__init__(message)
        self.flag = flag


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def prepare_outputs(policy: SandboxPolicy, bots: Iterable[BotSpec], cwd: Path,
                    folders: Mapping[str, str | Path | None] | None = None,
                    files: Mapping[str, str | Path | None] | None = None) -> SandboxPolicy:
    """Check every output (``folders`` and ``files``, by flag) against the folders each bot can read, refusing one
    that lies inside (``OutputError``), then make the output folders (and the files' folders) so that they exist
    before any bot starts; the policy, hiding them all."""
    outputs = [(flag, Path(path).absolute(), True) for flag, path in (folders or {}).items() if path is not None]
    outputs += [(flag, Path(path).absolute(), False) for flag, path in (files or {}).items() if path is not None]
    if policy.enabled:
        bots = list(bots)
        for flag, path, _ in outputs:
            real = path.resolve()
            for bot in bots:
                for folder, why in readable_folders(policy, bot.command, cwd):
                    if _inside(real, folder) or _inside(path, folder):
                        raise OutputError(flag, (
                            f"{path} lies inside {folder}, {why.format(bot=bot.name)}: a bot could read what arena "
                            "writes there while the match is played; choose a place outside the folders bots read"))
    for _, path, is_folder in outputs:
        (path if is_folder else path.parent).mkdir(parents=True, exist_ok=True)
    return policy.hiding(*(path for _, path, _ in outputs))
