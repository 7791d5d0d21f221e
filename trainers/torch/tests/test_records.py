"""Training records are checked against the committed JSON Schema (training-record.schema.json, generated
from the TypeScript zod type): every rule of the contract, each failure one line naming file, line and field."""

import json

import pytest
from conftest import step_record, write_jsonl

from webrl_torch.errors import InputError
from webrl_torch.records import SCHEMA_VERSION, read_records


def orm_record(**overrides) -> dict:
    record = {"schemaVersion": 1, "kind": "orm", "id": "o1", "campaignId": "c1", "phase": 0, "taskId": "t", "traceId": "tr", "prompt": "p", "response": "YES"}
    record.update(overrides)
    return record


def test_the_schema_version_is_the_one_the_typescript_contract_writes():
    assert SCHEMA_VERSION == 1


def test_valid_records_are_read(tmp_path):
    records = read_records(
        write_jsonl(tmp_path / "steps.jsonl", [step_record(0, success=True, responseTokens=3, refLogprob=-2.5), step_record(1, success=False)]), "step"
    )
    assert [(r.id, r.response_tokens, r.ref_logprob) for r in records] == [("trace-0:0", 3, -2.5), ("trace-1:0", None, None)]
    assert [r.success for r in read_records(write_jsonl(tmp_path / "orms.jsonl", [orm_record(), orm_record(response="NO")]), "orm")] == [True, False]


@pytest.mark.parametrize(
    ("record", "message"),
    [
        (step_record(0, success=True, phase=-1), ":1 phase: expected an integer >= 0, got -1"),
        (step_record(0, success=True, step=-2), ":1 step: expected an integer >= 0, got -2"),
        (step_record(0, success=True, step=1.5), ":1 step: expected an integer >= 0, got 1.5"),
        (step_record(0, success=True, reward="high"), ':1 reward: expected a finite number, got "high"'),
        (step_record(0, success=True, source="dream"), ':1 source: expected one of rollout, replay, demonstration, got "dream"'),
        (step_record(0, success=True, refLogprob=0.5), ":1 refLogprob: expected a finite number <= 0 or null, got 0.5"),
        (step_record(0, success=True, responseTokens=0), ":1 responseTokens: expected an integer >= 1 or null, got 0"),
        (step_record(0, success=True, state={"html": "x"}), ':1 state: expected an object with intent, got {"html": "x"}'),
        (step_record(0, success=True, schemaVersion=2), ":1 schemaVersion: expected 1, got 2"),
        (step_record(0, success=True, kind="trajectory"), ':1 kind: expected "step" or "orm", got "trajectory"'),
        (step_record(0, success=True, extra=1), ":1 extra: not a field of a step record (schemaVersion 1)"),
        (orm_record(response="maybe"), ':1 response: expected one of YES, NO, got "maybe"'),
    ],
)
def test_a_record_breaking_the_schema_names_line_and_field(tmp_path, record, message):
    with pytest.raises(InputError) as raised:
        read_records(write_jsonl(tmp_path / "data.jsonl", [record]), "step")
    assert str(raised.value) == f"{tmp_path / 'data.jsonl'}{message}"


def test_a_missing_field_is_named_first_in_the_schemas_order(tmp_path):
    record = step_record(0, success=True)
    del record["traceId"], record["reward"]
    with pytest.raises(InputError, match=r"data\.jsonl:1 traceId: missing$"):
        read_records(write_jsonl(tmp_path / "data.jsonl", [record]), "step")


def test_nan_is_refused_as_not_a_finite_number(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text(json.dumps(step_record(0, success=True)).replace('"reward": 1.0', '"reward": NaN') + "\n")
    with pytest.raises(InputError, match=r"data\.jsonl:1 reward: expected a finite number, got NaN$"):
        read_records(path, "step")
