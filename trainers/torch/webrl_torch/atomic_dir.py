"""Putting a finished directory in place of another in one step, so a reader never sees half of it."""

from __future__ import annotations

import shutil
from pathlib import Path


def replace_directory(partial: Path, target: Path) -> None:
    """Moves the finished `partial` to `target`; an older `target` is moved aside first, then removed."""
    if target.exists():
        previous = target.with_name(target.name + ".previous")
        shutil.rmtree(previous, ignore_errors=True)
        target.rename(previous)
        partial.rename(target)
        shutil.rmtree(previous)
    else:
        partial.rename(target)
