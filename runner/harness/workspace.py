"""The per-episode workspace of the tool harness: a temporary directory of stamp files.

Each step's tool, when the harness executes it, writes one stamp file holding the work
order (``protocol.strings.TOOL_STAMP``) into ``<root>/<tool>/``; the file's path relative to
the root is the call's receipt. A second stamp in a tool's folder is a re-execution of its
step. A tool that fails (the tool_failure knob) leaves no stamp: a partial write is rolled
back (:meth:`Workspace.partial_write`); a timeout whose write landed (the tool_failure_landed
knob) leaves its stamp, and :meth:`Workspace.writes` reads the stamps of a work order (the
read-only status tool). The directory is removed when the episode ends (also when it is
cancelled); the stamps read back from disk before that are what the log's receipts must
match (:meth:`Workspace.receipts`).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from protocol import strings

__all__ = ["Workspace", "stamp_text"]


def stamp_text(tool: str, work_order: str) -> str:
    """What a tool's stamp file holds."""
    return strings.TOOL_STAMP.format(tool=tool, work_order=work_order)


class Workspace:
    """Stamp files under ``root``; ``open()`` makes and removes a fresh temporary one."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._count = 0

    @classmethod
    @contextmanager
    def open(cls) -> Iterator[Workspace]:
        root = Path(tempfile.mkdtemp(prefix="ladder-ws-"))
        try:
            yield cls(root)
        finally:
            shutil.rmtree(root, ignore_errors=True)

    def stamp(self, tool: str, work_order: str) -> str:
        """Execute ``tool`` for ``work_order``: write its stamp; return the receipt."""
        self._count += 1
        folder = self.root / tool
        folder.mkdir(exist_ok=True)
        name = f"{self._count:04d}-{work_order.lstrip('#')}.stamp"
        (folder / name).write_text(stamp_text(tool, work_order), encoding="utf-8")
        return f"{tool}/{name}"

    def partial_write(self, tool: str, work_order: str) -> None:
        """A tool that fails mid-write: half its stamp written, then rolled back (removed);
        the workspace is as before and the stamp count does not move."""
        folder = self.root / tool
        folder.mkdir(exist_ok=True)
        part = folder / f"partial-{work_order.lstrip('#')}.tmp"
        text = stamp_text(tool, work_order)
        part.write_text(text[: len(text) // 2], encoding="utf-8")
        part.unlink()

    def receipts(self) -> dict[str, str]:
        """Every stamp on disk: receipt -> the stamp's text."""
        return {
            p.relative_to(self.root).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(self.root.glob("*/*.stamp"))
        }

    def writes(self, work_order: str) -> list[str]:
        """The tools whose stamp the workspace holds for ``work_order``, in tool order: what
        the read-only status tool reports (the tool_failure_landed knob). Reads only."""
        digits = work_order.lstrip("#")
        return sorted(
            {p.parent.name for p in self.root.glob(f"*/*-{digits}.stamp") if digits.isalnum()}
        )

    def executions(self, tool: str) -> int:
        """How many times ``tool`` has been executed (stamps in its folder)."""
        return sum(1 for _ in (self.root / tool).glob("*.stamp"))
