"""Reads and validates the campaign's training records (JSONL, schemaVersion 1), or the embedded trainer's
example rows (WEBRL_TRAIN_DATA_FORMAT=examples: phase 0's demonstrations, critic and ORM examples, which
carry structured states rather than prompts; models/train/examples.ts).

Every record is checked here, field by field, so a bad file fails before any model is loaded, with
`<file>:<line> <field>: <reason>`.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError
from .prompt import build_prompt, orm_prompt

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


def _lines(path: Path):
    """(where, record) for every non-blank line, each a JSON object."""
    if not path.is_file():
        raise InputError(f"{path}: data: no such file")
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
            yield where, record


def _chosen(path: Path, kind: str, steps: list[StepRecord], orms: list[OrmRecord]) -> list[StepRecord] | list[OrmRecord]:
    chosen = steps if kind == "step" else orms
    if not chosen:
        raise InputError(f"{path}: data: no {kind} records (the objective needs at least one)")
    return chosen


def read_records(path: str | Path, kind: str) -> list[StepRecord] | list[OrmRecord]:
    """All records of `kind` ("step" or "orm") in the file; any invalid line fails the whole file."""
    path = Path(path)
    steps: list[StepRecord] = []
    orms: list[OrmRecord] = []
    for where, record in _lines(path):
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
    return _chosen(path, kind, steps, orms)


def _is_state(value: object) -> bool:
    if not isinstance(value, dict) or not isinstance(value.get("intent"), str):
        return False
    history, observation = value.get("history", []), value.get("observation")
    rounds_ok = isinstance(history, list) and all(isinstance(r, str) or (isinstance(r, dict) and isinstance(r.get("response"), str)) for r in history)
    return rounds_ok and isinstance(observation, dict) and isinstance(observation.get("html"), str)


_STATE = (_is_state, "expected a state {intent, history, observation: {html}}")
_EXAMPLES = {
    "actor-sft": {"state": _STATE, "response": _STEP["response"]},
    "actor-webrl": {
        "state": _STATE,
        "response": _STEP["response"],
        "nextState": (lambda v: v is None or _is_state(v), "expected a state or null"),
        "reward": _STEP["reward"],
        "mcReturn": _STEP["mcReturn"],
    },
    "critic": {"state": _STATE, "mcReturn": _STEP["mcReturn"]},
    "orm": {"state": _STATE, "success": (lambda v: isinstance(v, bool), "expected a boolean")},
}


def _parts(state: dict) -> tuple[str, list[str], str]:
    """intent, the past responses, the page: what the prompts are built from."""
    responses = [r if isinstance(r, str) else r["response"] for r in state.get("history", [])]
    return state["intent"], responses, state["observation"]["html"]


def read_examples(path: str | Path, objective: str) -> list[StepRecord] | list[OrmRecord]:
    """The embedded trainer's rows for `objective` as records: each state becomes the completions actor's
    prompt (prompt.build_prompt), or for the orm the chat ORM's input (prompt.orm_prompt)."""
    path = Path(path)
    steps: list[StepRecord] = []
    orms: list[OrmRecord] = []
    fields = _EXAMPLES[objective]
    for where, row in _lines(path):
        _check(row, fields, where)
        line = where.rsplit(":", 1)[1]
        if objective == "orm":
            orms.append(OrmRecord(id=f"line-{line}", prompt=orm_prompt(*_parts(row["state"])), response="YES" if row["success"] else "NO"))
            continue
        following = row.get("nextState")
        steps.append(
            StepRecord(
                id=f"line-{line}",
                prompt=build_prompt(*_parts(row["state"])),
                response=row.get("response", ""),
                next_prompt=None if following is None else build_prompt(*_parts(following)),
                reward=float(row.get("reward", 0.0)),
                done=following is None,
                mc_return=float(row.get("mcReturn", 0.0)),
                ref_logprob=None,
                response_tokens=None,
                source="demonstration" if objective == "actor-sft" else "rollout",
            )
        )
    return _chosen(path, "orm" if objective == "orm" else "step", steps, orms)
