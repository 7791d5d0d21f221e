"""`webrl-torch export-webrl`: a phase's experience as the file THUDM/WebRL's trainer reads with `torch.load`
(webrl/algorithms/offpolicy_train_loop.py, `offline_data_path`).

Its loader decides the layout by the file's name: without `_filter` it expects a list of trajectories (each a
list of steps) and recomputes every step's mc_return from its reward; with `_filter` a flat list of steps
that already carry mc_return (what its scripts/process_data.py writes after the replay filter). It does not
shuffle, and keeps the last 5% of the list for validation, so the list is shuffled here by the seed: the
validation share is a random sample rather than whatever came last. Only plain Python values are saved, so
`torch.load` reads the file with or without `weights_only`.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import torch

from .errors import InputError

# Each step's fields as WebRL's ReplayBuffer.insert takes them (it keeps any other field, e.g. task).
_FIELDS = {
    "observation": (lambda v: isinstance(v, str), "a string"),
    "action": (lambda v: isinstance(v, str), "a string"),
    "reward": (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v), "a finite number"),
    "next_observation": (lambda v: isinstance(v, str), "a string"),
    "done": (lambda v: isinstance(v, bool), "a boolean"),
    "mc_return": (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v), "a finite number"),
}


def _check_step(step: object, where: str) -> None:
    if not isinstance(step, dict):
        raise InputError(f"{where}: expected a step object")
    for name, (valid, expected) in _FIELDS.items():
        if name not in step:
            raise InputError(f"{where}.{name}: missing")
        if not valid(step[name]):
            raise InputError(f"{where}.{name}: expected {expected}, got {json.dumps(step[name])[:60]}")


def write_webrl_file(items_path: str, out: str, seed: int) -> int:
    """Reads the steps (a JSON list of trajectories, or of steps when `out`'s name holds `_filter`), shuffles
    the list by `seed` and saves it with torch.save; returns the number of steps."""
    flat = "_filter" in Path(out).name
    try:
        data = json.loads(Path(items_path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise InputError(f"{items_path}: cannot read the steps ({error})") from None
    if not isinstance(data, list) or not data:
        raise InputError(f"{items_path}: expected a non-empty list of {'steps' if flat else 'trajectories'}")
    steps = 0
    for i, entry in enumerate(data):
        if flat:
            _check_step(entry, f"{items_path} [{i}]")
            steps += 1
            continue
        if not isinstance(entry, list) or not entry:
            raise InputError(f"{items_path} [{i}]: expected a trajectory (a non-empty list of steps); a flat step list needs `_filter` in the file name")
        for j, step in enumerate(entry):
            _check_step(step, f"{items_path} [{i}][{j}]")
        steps += len(entry)
    random.Random(seed).shuffle(data)
    partial = Path(f"{out}.partial")
    torch.save(data, partial)
    partial.replace(out)
    return steps
