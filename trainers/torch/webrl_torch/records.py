"""Reads and validates the campaign's training records (JSONL, schemaVersion 1), or the embedded trainer's
example rows (WEBRL_TRAIN_DATA_FORMAT=examples: phase 0's demonstrations, critic and ORM examples, which
carry structured states rather than prompts; models/train/examples.ts).

Training records are validated against training-record.schema.json beside this file: the JSON Schema that
`webrl schema training-record` prints from the TypeScript zod type, committed and kept current by
test/contract.test.ts. A bad file fails before any model is loaded, with `<file>:<line> <field>: <reason>`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from jsonschema import Draft202012Validator

from .errors import InputError
from .prompt import build_prompt, orm_messages

SCHEMA = json.loads((Path(__file__).parent / "training-record.schema.json").read_text(encoding="utf-8"))
# One branch per record kind (the schema's oneOf is discriminated by `kind`).
_BRANCHES = {branch["properties"]["kind"]["const"]: branch for branch in SCHEMA["oneOf"]}
SCHEMA_VERSION = next(iter(_BRANCHES.values()))["properties"]["schemaVersion"]["const"]
_VALIDATORS = {kind: Draft202012Validator(branch) for kind, branch in _BRANCHES.items()}
# JavaScript's Number.MAX_SAFE_INTEGER: zod's bound on every integer, not worth naming in a reason.
_MAX_SAFE_INTEGER = 2**53 - 1


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
    # The trajectory the step belongs to (a record's traceId): the critic weighs each trajectory once.
    trajectory: str


@dataclass(frozen=True)
class OrmRecord:
    id: str
    prompt: str  # the full text the judge reads, its chat template applied
    response: str  # "YES" | "NO"

    @property
    def success(self) -> bool:
        return self.response == "YES"


class _NonFinite(str):
    """NaN or +-Infinity in a line (Python's json accepts them; JSON and the schema do not): a string, so no
    number check passes it."""


def _shown(value: object) -> str:
    return str(value) if isinstance(value, _NonFinite) else json.dumps(value)[:60]


_TYPE_NAMES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a finite number",
    "boolean": "a boolean",
    "null": "null",
    "object": "an object",
    "array": "an array",
}


def _expected(schema: dict) -> str:
    """What a field's schema accepts, in words: `an integer >= 0`, `one of rollout, replay`, `a string or null`."""
    if "const" in schema:
        return json.dumps(schema["const"])
    if "enum" in schema:
        return "one of " + ", ".join(str(value) for value in schema["enum"])
    if "anyOf" in schema:
        return " or ".join(_expected(option) for option in schema["anyOf"])
    types = schema.get("type", [])
    words = " or ".join(_TYPE_NAMES.get(name, name) for name in (types if isinstance(types, list) else [types]))
    if "minimum" in schema:
        words += f" >= {schema['minimum']}"
    if "maximum" in schema and schema["maximum"] != _MAX_SAFE_INTEGER:
        words += f" <= {schema['maximum']}"
    if schema.get("required"):
        words += " with " + ", ".join(schema["required"])
    return words


def _check_record(record: dict, kind: str, where: str) -> None:
    """The first field (in the schema's order) the record breaks, as `<where> <field>: <reason>`."""
    branch = _BRANCHES[kind]
    properties = branch["properties"]
    order = {name: index for index, name in enumerate(properties)}
    problems: list[tuple[int, str, str]] = []
    for error in _VALIDATORS[kind].iter_errors(record):
        if error.validator == "required" and not error.absolute_path:
            for name in (n for n in error.validator_value if n not in record):
                problems.append((order[name], name, "missing"))
        elif error.validator == "additionalProperties" and not error.absolute_path:
            for name in (n for n in record if n not in properties):
                problems.append((len(order), name, f"not a field of a {kind} record (schemaVersion {SCHEMA_VERSION})"))
        else:
            name = str(error.absolute_path[0]) if error.absolute_path else "(record)"
            expected = _expected(properties[name]) if name in properties else error.message
            problems.append((order.get(name, len(order)), name, f"expected {expected}, got {_shown(record.get(name))}"))
    if problems:
        _, name, reason = min(problems, key=lambda problem: problem[0])
        raise InputError(f"{where} {name}: {reason}")


def _check(record: dict, fields: dict, where: str) -> None:
    for name, (valid, reason) in fields.items():
        if name not in record:
            raise InputError(f"{where} {name}: missing")
        if not valid(record[name]):
            raise InputError(f"{where} {name}: {reason}, got {_shown(record[name])}")


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
                record = json.loads(line, parse_constant=_NonFinite)
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


def records_kind(objective: str) -> str:
    """The records an objective trains on: the ORM's verdicts, or steps (the actor's and the critic's)."""
    return "orm" if objective == "orm" else "step"


def read_records(path: str | Path, kind: str) -> list[StepRecord] | list[OrmRecord]:
    """All records of `kind` ("step" or "orm") in the file; any invalid line fails the whole file."""
    path = Path(path)
    steps: list[StepRecord] = []
    orms: list[OrmRecord] = []
    for where, record in _lines(path):
        version = record.get("schemaVersion")
        if version != SCHEMA_VERSION:
            raise InputError(f"{where} schemaVersion: expected {SCHEMA_VERSION}, got {_shown(version)}")
        kind_of = record.get("kind")
        if kind_of not in _BRANCHES:
            raise InputError(f"{where} kind: expected {' or '.join(json.dumps(k) for k in _BRANCHES)}, got {_shown(kind_of)}")
        _check_record(record, kind_of, where)
        if kind_of == "step":
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
                    response_tokens=None if record["responseTokens"] is None else int(record["responseTokens"]),
                    source=record["source"],
                    trajectory=record["traceId"],
                )
            )
        else:
            orms.append(OrmRecord(id=record["id"], prompt=record["prompt"], response=record["response"]))
    return _chosen(path, kind, steps, orms)


def _is_state(value: object) -> bool:
    if not isinstance(value, dict) or not isinstance(value.get("intent"), str):
        return False
    history, observation = value.get("history", []), value.get("observation")
    rounds_ok = isinstance(history, list) and all(isinstance(r, str) or (isinstance(r, dict) and isinstance(r.get("response"), str)) for r in history)
    return rounds_ok and isinstance(observation, dict) and isinstance(observation.get("html"), str)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


_STATE = (_is_state, "expected a state {intent, history, observation: {html}}")
_RESPONSE = (lambda v: isinstance(v, str), "expected a string")
_NUMBER = (_is_number, "expected a finite number")
_EXAMPLES = {
    "actor-sft": {"state": _STATE, "response": _RESPONSE},
    "actor-webrl": {
        "state": _STATE,
        "response": _RESPONSE,
        "nextState": (lambda v: v is None or _is_state(v), "expected a state or null"),
        "reward": _NUMBER,
        "mcReturn": _NUMBER,
    },
    "critic": {"state": _STATE, "mcReturn": _NUMBER},
    "orm": {"state": _STATE, "success": (lambda v: isinstance(v, bool), "expected a boolean")},
}


def _parts(state: dict) -> tuple[str, list[str], str]:
    """intent, the past responses, the page: what the prompts are built from."""
    responses = [r if isinstance(r, str) else r["response"] for r in state.get("history", [])]
    return state["intent"], responses, state["observation"]["html"]


def read_examples(path: str | Path, objective: str, render_chat: Callable[[list[dict[str, str]]], str]) -> list[StepRecord] | list[OrmRecord]:
    """The embedded trainer's rows for `objective` as records: each state becomes the completions actor's
    prompt (prompt.build_prompt), or for the orm the chat ORM's conversation (prompt.orm_messages) rendered
    by `render_chat` (the model's chat template, as the chat endpoint that serves the judge renders it)."""
    path = Path(path)
    steps: list[StepRecord] = []
    orms: list[OrmRecord] = []
    fields = _EXAMPLES[objective]
    for where, row in _lines(path):
        _check(row, fields, where)
        line = where.rsplit(":", 1)[1]
        if objective == "orm":
            orms.append(OrmRecord(id=f"line-{line}", prompt=render_chat(orm_messages(*_parts(row["state"]))), response="YES" if row["success"] else "NO"))
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
                # Critic examples name their trajectory; a row without one is a trajectory of its own.
                trajectory=str(row.get("trajectory", f"line-{line}")),
            )
        )
    return _chosen(path, records_kind(objective), steps, orms)
