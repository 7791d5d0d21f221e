"""Each objective, one short job on the tiny Llama: the loss falls on a fixed batch and the output loads back;
a batch without a loss row takes no optimizer step; the job's metrics file; a reference model that is not needed is not loaded."""

import json
from pathlib import Path

import pytest
import torch
from conftest import orm_record, step_record, step_records, write_jsonl
from peft import PeftModel
from safetensors.torch import load_file
from transformers import AutoModelForCausalLM, AutoTokenizer

from webrl_torch.errors import InputError
from webrl_torch.modeling import ModelOptions, load_critic
from webrl_torch.train import METRICS_FILE, JobSpec, run

PROMPT = "Task: find the cheapest product number 2. Round 0"


def options(model: Path, **overrides) -> ModelOptions:
    return ModelOptions(base_model=str(model), lora_rank=8, lora_alpha=16, **overrides)


def job(tmp_path: Path, base: Path, objective: str, records: list[dict], **overrides) -> JobSpec:
    tmp_path.mkdir(parents=True, exist_ok=True)
    settings = dict(epochs=12, batch_size=len(records), seed=7, learning_rate=1e-2, max_length=256)
    settings.update(overrides)
    model_options = settings.pop("model", options(base))
    return JobSpec(objective=objective, data=str(write_jsonl(tmp_path / "data.jsonl", records)), out=str(tmp_path / "out"), model=model_options, **settings)


def logits_of(model, tokenizer) -> torch.Tensor:
    with torch.no_grad():
        return model(**tokenizer(PROMPT, return_tensors="pt")).logits


def assert_adapter_changes_outputs(base: Path, adapter: Path) -> None:
    tokenizer = AutoTokenizer.from_pretrained(str(base))
    model = AutoModelForCausalLM.from_pretrained(str(base))
    before = logits_of(model, tokenizer)
    tuned = PeftModel.from_pretrained(model, str(adapter))
    after = logits_of(tuned, tokenizer)
    assert (after - before).abs().max().item() > 1e-4


def falls(losses: list[float]) -> bool:
    return losses[-1] < losses[0]


@pytest.fixture(scope="module")
def critic_dir(tiny_model, tmp_path_factory) -> Path:
    spec = job(tmp_path_factory.mktemp("critic"), tiny_model, "critic", step_records())
    losses = run(spec)
    assert falls(losses), losses
    return Path(spec.out)


def test_actor_sft_lowers_token_nll_and_writes_an_adapter_that_loads(tiny_model, tmp_path):
    spec = job(tmp_path, tiny_model, "actor-sft", step_records())
    losses = run(spec)
    assert falls(losses), losses
    out = Path(spec.out)
    assert (out / "adapter_config.json").is_file() and (out / "adapter_model.safetensors").is_file()
    assert not (out / ".checkpoints").exists()
    assert_adapter_changes_outputs(tiny_model, out)


def test_actor_sft_on_bf16_weights_trains_an_fp32_adapter(tiny_model, tmp_path):
    # What `--dtype auto` picks on a CPU with AVX512-BF16/AMX: the base in bf16, the adapter PEFT keeps in fp32.
    spec = job(tmp_path, tiny_model, "actor-sft", step_records(), model=options(tiny_model, dtype=torch.bfloat16))
    assert falls(run(spec))
    weights = load_file(str(Path(spec.out) / "adapter_model.safetensors"))
    assert {tensor.dtype for tensor in weights.values()} == {torch.float32}
    assert_adapter_changes_outputs(tiny_model, Path(spec.out))


def test_critic_lowers_its_loss_and_its_checkpoint_loads_with_the_heads(tiny_model, critic_dir):
    assert (critic_dir / "heads.safetensors").is_file() and (critic_dir / "lm" / "adapter_config.json").is_file()
    critic = load_critic(options(tiny_model), str(critic_dir), trainable=False)
    tokenizer = AutoTokenizer.from_pretrained(str(tiny_model))
    encoded = tokenizer(PROMPT, return_tensors="pt")
    v1, v2 = critic(encoded["input_ids"], encoded["attention_mask"])
    assert v1.shape == (1, 2) and v2.shape == (1, 2)
    assert_adapter_changes_outputs(tiny_model, critic_dir / "lm")


def test_actor_webrl_lowers_its_loss_against_the_critic_and_reference(tiny_model, critic_dir, tmp_path):
    spec = job(tmp_path, tiny_model, "actor-webrl", step_records(), critic=str(critic_dir), learning_rate=3e-3)
    losses = run(spec)
    assert falls(losses), losses
    assert_adapter_changes_outputs(tiny_model, Path(spec.out))


def test_orm_lowers_its_loss_and_writes_an_adapter_that_loads(tiny_model, tmp_path):
    spec = job(tmp_path, tiny_model, "orm", [orm_record(i, i % 2 == 0) for i in range(6)], learning_rate=2e-3)
    losses = run(spec)
    assert falls(losses), losses
    assert_adapter_changes_outputs(tiny_model, Path(spec.out))


def test_full_finetune_writes_a_checkpoint_transformers_loads(tiny_model, tmp_path):
    spec = job(tmp_path, tiny_model, "actor-sft", step_records(), epochs=3, learning_rate=1e-3, model=options(tiny_model, full_finetune=True))
    run(spec)
    tokenizer = AutoTokenizer.from_pretrained(str(tiny_model))
    trained = AutoModelForCausalLM.from_pretrained(spec.out)
    base = AutoModelForCausalLM.from_pretrained(str(tiny_model))
    assert (logits_of(trained, tokenizer) - logits_of(base, tokenizer)).abs().max().item() > 1e-4


def adapter_weights(out: str) -> dict[str, torch.Tensor]:
    return load_file(str(Path(out) / "adapter_model.safetensors"))


def metrics_of(out: str) -> dict:
    return json.loads((Path(out) / METRICS_FILE).read_text())


def test_a_batch_without_a_loss_row_changes_no_weight(tiny_model, critic_dir, tmp_path):
    # One success (positive advantage) alone, then with three failed last steps (no positive row: each its own batch).
    success = step_record(0, success=True)
    alone = job(tmp_path / "alone", tiny_model, "actor-webrl", [success], critic=str(critic_dir), epochs=1, batch_size=1)
    mixed = job(
        tmp_path / "mixed",
        tiny_model,
        "actor-webrl",
        [success, *(step_record(i, success=False) for i in (1, 2, 3))],
        critic=str(critic_dir),
        epochs=1,
        batch_size=1,
    )
    assert len(run(alone)) == 1 and len(run(mixed)) == 1
    assert_adapter_changes_outputs(tiny_model, Path(alone.out))  # the one step moved the weights...
    stepped, skipped = adapter_weights(alone.out), adapter_weights(mixed.out)
    assert stepped.keys() == skipped.keys()
    for name in stepped:  # ...and the three batches without a loss row moved none
        assert torch.equal(stepped[name], skipped[name]), name
    metrics = metrics_of(mixed.out)
    assert (metrics["optimizerSteps"], metrics["skippedSteps"], metrics["rows"]) == (1, 3, 4)
    assert metrics["positiveRows"] == {"success": 1, "rollout": 0, "replay": 0, "demonstration": 0}
    assert metrics["klPerToken"]["mean"] == pytest.approx(0.0, abs=1e-6)  # the one step was measured before its update


def test_records_that_all_carry_ref_logprob_need_no_reference_model_and_positive_rows_are_counted_by_source(tiny_model, critic_dir, tmp_path):
    records = [
        step_record(0, success=True, ref_logprob=-9.0),
        step_record(1, success=False, ref_logprob=-9.0),
        step_record(2, success=True, ref_logprob=-9.0, source="replay"),
        step_record(3, success=True, ref_logprob=-9.0, source="demonstration"),
    ]
    missing = str(tmp_path / "no-reference-here")
    scored = job(
        tmp_path / "scored",
        tiny_model,
        "actor-webrl",
        records,
        critic=str(critic_dir),
        reference=missing,
        epochs=1,
        batch_size=2,
        learning_rate=1e-3,
        max_kl=100.0,
    )
    run(scored)  # the reference directory does not exist: it was never loaded (refLogprob -9 is far from the tiny model: max_kl raised)
    metrics = metrics_of(scored.out)
    assert metrics["positiveRows"] == {"success": 1, "rollout": 0, "replay": 1, "demonstration": 1}
    assert metrics["optimizerSteps"] + metrics["skippedSteps"] == 2 and metrics["optimizerSteps"] >= 1
    assert metrics["klPerToken"] is not None

    unscored = job(
        tmp_path / "unscored", tiny_model, "actor-webrl", [*records[:3], step_record(3, success=True)], critic=str(critic_dir), reference=missing, epochs=1
    )
    with pytest.raises(InputError, match="no-reference-here init"):
        run(unscored)


def test_every_objective_writes_its_metrics_beside_the_model(tiny_model, critic_dir, tmp_path):
    spec = job(tmp_path, tiny_model, "actor-sft", step_records(), epochs=2)
    run(spec)
    assert metrics_of(spec.out) == {"objective": "actor-sft", "rows": 6, "optimizerSteps": 2, "skippedSteps": 0, "positiveRows": None, "klPerToken": None}
    assert metrics_of(str(critic_dir))["optimizerSteps"] == 12
