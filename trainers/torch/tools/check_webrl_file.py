"""Loads a file as THUDM/WebRL's trainer does and walks it to the batches its trainer receives; imports
nothing from webrl-temporal (only torch and numpy, which WebRL's trainer imports too).

    python check_webrl_file.py FILE.pt [--gamma 0.9]

Mirrors webrl/algorithms/offpolicy_train_loop.py (torch.load; mc_return recomputed per trajectory with
add_mc_return unless the name holds `_filter`; the first 95% for training, the rest for validation; a
trajectory file flattened; `<|eot_id|>` appended to each training action), webrl/data/utils.py's
ReplayBuffer.insert (scalar reward, done and mc_return) and its trainer's DataLoader over ReplayBuffer.get
at batch size 1. Prints one JSON line describing what it loaded; exits 1 with the reason when WebRL's
code would fail on the file.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np
import torch
from torch.utils.data import DataLoader


def add_mc_return(trajectory: list[dict], gamma: float) -> list[dict]:
    """WebRL's discounted sum of the rewards from each step on (env_utils.add_mc_return)."""
    rewards = np.array([step["reward"] for step in trajectory], dtype=np.float64)
    for t, step in enumerate(trajectory):
        step["mc_return"] = float(sum(rewards[k] * gamma ** (k - t) for k in range(t, len(rewards))))
    return trajectory


def as_scalar(value: object, name: str) -> np.ndarray:
    """ReplayBuffer.insert: Python numbers and bools become 0-d arrays, and each must be 0-d."""
    if isinstance(value, (float, int, bool)):
        value = np.array(value)
    if isinstance(value, torch.Tensor):
        value = value.numpy()
    if not isinstance(value, np.ndarray) or value.shape != ():
        raise ValueError(f"{name}: ReplayBuffer.insert needs a scalar, got {value!r}")
    return value


def insert(buffer: list[dict], step: dict) -> None:
    for name in ("observation", "action", "next_observation"):
        if not isinstance(step.get(name), str):
            raise ValueError(f"{name}: expected a string (the trainer tokenises it), got {step.get(name)!r}")
    buffer.append(
        {
            "observation": step["observation"],
            "action": step["action"],
            "reward": as_scalar(step["reward"], "reward"),
            "next_observation": step["next_observation"],
            "done": as_scalar(step["done"], "done"),
            "mc_return": as_scalar(step["mc_return"], "mc_return"),
        }
    )


def load(path: str, gamma: float) -> dict:
    everything = torch.load(path, weights_only=True)
    filtered = "_filter" in path
    stored = None
    if not filtered:
        stored = [step["mc_return"] for trajectory in everything for step in trajectory]
        everything = [add_mc_return(trajectory, gamma) for trajectory in everything]
    split = int(len(everything) * 0.95)
    train, validation = everything[:split], everything[split:]
    if not filtered:
        train, validation = sum(train, []), sum(validation, [])
    buffer: list[dict] = []
    for step in train:
        if not step["action"].endswith("<|eot_id|>"):
            step["action"] = step["action"] + "<|eot_id|>"
        insert(buffer, step)
    validation_buffer: list[dict] = []
    for step in validation:
        insert(validation_buffer, step)
    # The trainer's batches: DataLoader over ReplayBuffer.get(i) with each field's [0] taken, batch size 1.
    batches = list(DataLoader(buffer, batch_size=1))
    for batch in batches:
        if not (isinstance(batch["observation"], list) and isinstance(batch["observation"][0], str)):
            raise ValueError("observation: the trainer expects a list of strings per batch")
        for name in ("reward", "done", "mc_return"):
            if batch[name].shape != (1,):
                raise ValueError(f"{name}: expected one value per batch, got shape {tuple(batch[name].shape)}")
    recomputed = [float(step["mc_return"]) for step in (train + validation)] if not filtered else None
    return {
        "layout": "steps" if filtered else "trajectories",
        "entries": len(everything),
        "train_steps": len(buffer),
        "validation_steps": len(validation_buffer),
        "batches": len(batches),
        "tasks": [step.get("task") for step in train + validation],
        "first_action": buffer[0]["action"] if buffer else None,
        "mc_return_stored_vs_recomputed": None if stored is None else max((abs(a - b) for a, b in zip(stored, recomputed, strict=False)), default=0.0),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--gamma", type=float, default=0.9, help="WebRL's config gamma (scripts/config/main/default.yaml)")
    args = parser.parse_args()
    try:
        print(json.dumps(load(args.file, args.gamma)))
    except (KeyError, ValueError, TypeError, RuntimeError) as error:
        print(f"check_webrl_file: WebRL's loader would fail: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
