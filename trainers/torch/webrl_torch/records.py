"""Reads and validates the campaign's training records (JSONL, schemaVersion 1).

Every record is checked here, field by field, so a bad file fails before any model is loaded, with
`<file>:<line> <field>: <reason>`.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError

SCHEMA_VERSION = 1
SOURCES = ("rollout", "replay", "demonstration")


@dataclass(frozen=True)
class StepRecord:
    id: str
    prompt: str
    response: str
    next_prompt: str | None
    reward: float
    done: bool
    mc_return: float
    ref_logprob: float | None
    response_tokens: int | None
    source: str


@dataclass(frozen=True)
class OrmRecord:
    id: str
    prompt: str
    response: str  # "YES" | "NO"

    @property
    def success(self) -> bool:
        return self.response == "YES"


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)) and math.isfinite(value)


_COMMON = {
    "id": (lambda v: isinstance(v, str), "expected a string"),
    "campaignId": (lambda v: isinstance(v, str), "expected a string"),
    "phase": (_is_int, "expected an integer"),
    "taskId": (lambda v: isinstance(v, str), "expected a string"),
    "traceId": (lambda v: isinstance(v, str), "expected a string"),
    "prompt": (lambda v: isinstance(v, str), "expected a string"),
}

_STEP = {
    **_COMMON,
    "step": (_is_int, "expected an integer"),
    "source": (lambda v: v in SOURCES, f"expected one of {', '.join(SOURCES)}"),
    "response": (lambda v: isinstance(v, str), "expected a string"),
    "nextPrompt": (lambda v: v is None or isinstance(v, str), "expected a string or null"),
    "reward": (_is_number, "expected a finite number"),
    "done": (lambda v: isinstance(v, bool), "expected a boolean"),
    "mcReturn": (_is_number, "expected a finite number"),
    "refLogprob": (lambda v: v is None or (_is_number(v) and v <= 0), "expected a number <= 0 or null"),
    "responseTokens": (lambda v: v is None or (_is_int(v) and v > 0), "expected a positive integer or null"),
    "rank": (lambda v: v is None or _is_number(v), "expected a number or null"),
    "state": (lambda v: isinstance(v, dict), "expected an object"),
}

_ORM = {**_COMMON, "response": (lambda v: v in ("YES", "NO"), 'expected "YES" or "NO"')}


def _check(record: dict, fields: dict, where: str) -> None:
    for name, (valid, reason) in fields.items():
        if name not in record:
            raise InputError(f"{where} {name}: missing")
        if not valid(record[name]):
            raise InputError(f"{where} {name}: {reason}, got {json.dumps(record[name])[:60]}")


def read_records(path: str | Path, kind: str) -> list[StepRecord] | list[OrmRecord]:
    """All records of `kind` ("step" or "orm") in the file; any invalid line fails the whole file."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: data: no such file")
    steps: list[StepRecord] = []
    orms: list[OrmRecord] = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise InputError(f"{where} (record): not JSON ({error.msg})") from None
            if not isinstance(record, dict):
                raise InputError(f"{where} (record): expected a JSON object")
            version = record.get("schemaVersion")
            if version != SCHEMA_VERSION:
                raise InputError(f"{where} schemaVersion: expected {SCHEMA_VERSION}, got {json.dumps(version)}")
            if record.get("kind") == "step":
                _check(record, _STEP, where)
                steps.append(
                    StepRecord(
                        id=record["id"],
                        prompt=record["prompt"],
                        response=record["response"],
                        next_prompt=record["nextPrompt"],
                        reward=float(record["reward"]),
                        done=record["done"],
                        mc_return=float(record["mcReturn"]),
                        ref_logprob=None if record["refLogprob"] is None else float(record["refLogprob"]),
                        response_tokens=record["responseTokens"],
                        source=record["source"],
                    )
                )
            elif record.get("kind") == "orm":
                _check(record, _ORM, where)
                orms.append(OrmRecord(id=record["id"], prompt=record["prompt"], response=record["response"]))
            else:
                raise InputError(f'{where} kind: expected "step" or "orm", got {json.dumps(record.get("kind"))}')
    chosen = steps if kind == "step" else orms
    if not chosen:
        raise InputError(f"{path}: data: no {kind} records (the objective needs at least one)")
    return chosen
