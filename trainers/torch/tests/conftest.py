import json
from pathlib import Path

import pytest

from webrl_torch.testing.tiny import build_tiny_model


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny-llama"))


def step_record(i: int, *, success: bool, last: bool = True, ref_logprob=None, **overrides) -> dict:
    record = {
        "schemaVersion": 1,
        "kind": "step",
        "id": f"trace-{i}:0",
        "campaignId": "c1",
        "phase": 1,
        "taskId": f"task-{i}",
        "traceId": f"trace-{i}",
        "step": 0,
        "source": "rollout",
        "prompt": f'Task: find the cheapest product number {i}. Round 0 <html> <button id="3"> Search </button> </html>',
        "response": 'do(action="Click", element="3")' if success else 'exit(message="no")',
        "nextPrompt": None if last else f"Task: find the cheapest product number {i}. Round 1 <html> </html>",
        "reward": 1.0 if success and last else 0.0,
        "done": last,
        "mcReturn": 1.0 if success else 0.0,
        "refLogprob": ref_logprob,
        "responseTokens": None,
        "rank": None,
        "state": {"intent": f"find the cheapest product number {i}"},
    }
    record.update(overrides)
    return record


def orm_record(i: int, success: bool) -> dict:
    return {
        "schemaVersion": 1,
        "kind": "orm",
        "id": f"trace-{i}:orm",
        "campaignId": "c1",
        "phase": 1,
        "taskId": f"task-{i}",
        "traceId": f"trace-{i}",
        "prompt": f"Task {i}: did the agent finish? History: click {i}. Answer YES or NO.",
        "response": "YES" if success else "NO",
    }


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def step_records() -> list[dict]:
    return [step_record(i, success=i % 2 == 0, last=i % 3 != 1, ref_logprob=-12.0 if i == 0 else None) for i in range(6)]


def train_tiny_job(tiny_model: Path, directory: Path, objective: str, *, epochs: int, learning_rate: float) -> str:
    """One short LoRA job of `objective` on the tiny model over the step records; returns its output directory."""
    from webrl_torch.modeling import ModelOptions
    from webrl_torch.train import JobSpec, run

    spec = JobSpec(
        objective=objective,
        data=str(write_jsonl(directory / "data.jsonl", step_records())),
        out=str(directory / "out"),
        model=ModelOptions(base_model=str(tiny_model), lora_rank=4, lora_alpha=8),
        epochs=epochs,
        batch_size=6,
        learning_rate=learning_rate,
    )
    run(spec)
    return spec.out
