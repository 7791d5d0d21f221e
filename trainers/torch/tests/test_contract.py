"""The external-trainer contract: exit codes, one-line reasons, nothing written on bad input, resume."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from conftest import orm_record, step_record, step_records, write_jsonl
from safetensors.torch import load_file

from webrl_torch import train as train_module
from webrl_torch.cli import main
from webrl_torch.modeling import ModelOptions
from webrl_torch.testing.tiny import build_tiny_model
from webrl_torch.train import JobSpec, run


def trainer(model: Path, data: Path, out: Path, objective: str = "actor-sft", *extra: str, **env: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "WEBRL_TRAIN_OBJECTIVE": objective, "WEBRL_TRAIN_EPOCHS": "1", "WEBRL_TRAIN_BATCH_SIZE": "4", "WEBRL_TRAIN_SEED": "1", **env}
    command = [sys.executable, "-m", "webrl_torch.cli", "train", "--base-model", str(model), "--data", str(data), "--out", str(out), "--lora-rank", "4", *extra]
    return subprocess.run(command, env=environment, capture_output=True, text=True, timeout=600)


def last_line(result: subprocess.CompletedProcess) -> str:
    return result.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("records", "field"),
    [
        ([step_record(0, success=True, schemaVersion=2)], ":1 schemaVersion: expected 1, got 2"),
        ([step_record(0, success=True), step_record(1, success=True, reward="high")], ":2 reward: expected a finite number"),
        ([step_record(0, success=True, source="dream")], ":1 source: expected one of rollout, replay, demonstration"),
        ([], "data: no step records"),
    ],
)
def test_bad_records_exit_2_with_one_line_naming_file_and_field_and_write_nothing(tiny_model, tmp_path, records, field):
    data = write_jsonl(tmp_path / "data.jsonl", records)
    out = tmp_path / "out"
    result = trainer(tiny_model, data, out)
    assert result.returncode == 2, result.stderr
    assert last_line(result) == result.stderr.strip()  # one line
    assert f"{data}{field}" in last_line(result) or f"{data}: {field}" in last_line(result)
    assert not out.exists()


def test_a_checkpoint_of_another_architecture_exits_2_naming_the_file_and_field(tiny_model, tmp_path):
    other = build_tiny_model(tmp_path / "other", hidden_size=32)
    out = tmp_path / "out"
    result = trainer(tiny_model, write_jsonl(tmp_path / "data.jsonl", step_records()), out, "actor-sft", "--init", str(other))
    assert result.returncode == 2
    assert f"{other / 'config.json'} hidden_size: 32 does not match the base model's 128" in last_line(result)
    assert not out.exists()


def test_a_wrong_record_schema_version_in_the_environment_exits_2(tiny_model, tmp_path):
    result = trainer(tiny_model, write_jsonl(tmp_path / "data.jsonl", step_records()), tmp_path / "out", WEBRL_TRAIN_RECORD_SCHEMA_VERSION="2")
    assert result.returncode == 2 and "WEBRL_TRAIN_RECORD_SCHEMA_VERSION: expected 1" in last_line(result)


def test_a_job_reports_progress_and_exits_0_with_an_adapter_vllm_loads(tiny_model, tmp_path):
    out = tmp_path / "out"
    result = trainer(
        tiny_model, write_jsonl(tmp_path / "data.jsonl", step_records()), out, "actor-sft", "--max-lora-rank", "8", WEBRL_TRAIN_LEARNING_RATE="0.001"
    )
    assert result.returncode == 0, result.stderr
    lines = [line.split() for line in result.stdout.splitlines() if line.startswith("PROGRESS ")]
    progress = [float(fields[1]) for fields in lines]
    assert progress[0] == 0.0 and progress[-1] == 1.0 and progress == sorted(progress)
    # Each line also counts the steps done of the job's total, from 0.
    steps = [tuple(int(n) for n in fields[2].split("/")) for fields in lines]
    total = steps[0][1]
    assert steps == [(done, total) for done in range(total + 1)], steps
    config = json.loads((out / "adapter_config.json").read_text())
    # What vLLM's LoRA loading checks: rank within --max-lora-rank, no bias, no DoRA, no modules saved whole.
    assert config["r"] == 4 and config["bias"] == "none" and config["use_dora"] is False and config["modules_to_save"] is None


def in_process(capsys, tiny_model, tmp_path, *extra: str, objective: str = "actor-sft") -> tuple[int, str]:
    """`webrl-torch train` in this process (main's exit code and stderr): the checks that run before any work."""
    out = tmp_path / "out"
    argv = ["train", "--base-model", str(tiny_model), "--data", str(write_jsonl(tmp_path / "data.jsonl", step_records())), "--out", str(out), *extra]
    os.environ["WEBRL_TRAIN_OBJECTIVE"] = objective
    try:
        code = main(argv)
    finally:
        del os.environ["WEBRL_TRAIN_OBJECTIVE"]
    assert not out.exists()
    return code, capsys.readouterr().err.strip()


def test_a_lora_rank_above_the_serving_vllms_max_lora_rank_exits_2_before_any_work(tiny_model, tmp_path, capsys, monkeypatch):
    code, error = in_process(capsys, tiny_model, tmp_path, "--lora-rank", "64", "--max-lora-rank", "16")
    assert code == 2 and error == "webrl-torch: --lora-rank 64 is above the serving vLLM's --max-lora-rank 16: vLLM would refuse the adapter"
    monkeypatch.setenv("WEBRL_TRAIN_MAX_LORA_RANK", "8")  # the environment's value wins, as for the other settings
    code, error = in_process(capsys, tiny_model, tmp_path, "--lora-rank", "16", "--max-lora-rank", "16")
    assert code == 2 and "--lora-rank 16 is above the serving vLLM's --max-lora-rank 8" in error
    # A job that continues an adapter keeps its rank: that is the one checked as well.
    previous = tmp_path / "previous"
    previous.mkdir()
    (previous / "adapter_config.json").write_text(json.dumps({"r": 32, "bias": "none", "use_dora": False, "modules_to_save": None}))
    code, error = in_process(capsys, tiny_model, tmp_path, "--lora-rank", "4", "--init", str(previous), objective="actor-webrl")
    assert (
        code == 2
        and error
        == f"webrl-torch: {previous / 'adapter_config.json'} r: 32 is above the serving vLLM's --max-lora-rank 8: vLLM would refuse the adapter this job continues"
    )


def test_a_full_finetune_for_a_vllm_that_loads_lora_adapters_exits_2(tiny_model, tmp_path, capsys):
    code, error = in_process(capsys, tiny_model, tmp_path, "--full-finetune", "--max-lora-rank", "16")
    assert code == 2 and error.startswith("webrl-torch: --full-finetune with --max-lora-rank 16: vLLM's runtime LoRA loading needs a LoRA adapter")
    assert len(error.splitlines()) == 1


def test_a_nan_loss_stops_the_job_with_the_step_and_last_metrics_and_no_output(tiny_model, tmp_path):
    out = tmp_path / "out"
    result = trainer(
        tiny_model,
        write_jsonl(tmp_path / "data.jsonl", step_records()),
        out,
        "actor-sft",
        "--max-grad-norm",
        "1e30",
        WEBRL_TRAIN_LEARNING_RATE="1e30",
        WEBRL_TRAIN_EPOCHS="4",
        WEBRL_TRAIN_BATCH_SIZE="6",
    )
    assert result.returncode == 3, result.stderr
    assert re.search(r"stopped at step \d of 4: the loss is (nan|inf|-inf) \(last metrics: ", last_line(result))
    assert not (out / "adapter_model.safetensors").exists()


def test_a_retried_job_resumes_from_its_step_checkpoint_and_ends_where_an_uninterrupted_one_does(tiny_model, tmp_path, monkeypatch):
    data = write_jsonl(tmp_path / "data.jsonl", step_records())

    def spec(out: Path) -> JobSpec:
        model = ModelOptions(base_model=str(tiny_model), lora_rank=4, lora_alpha=8)
        return JobSpec(objective="actor-sft", data=str(data), out=str(out), model=model, epochs=3, batch_size=2, seed=3, learning_rate=1e-3, checkpoint_every=4)

    uninterrupted = run(spec(tmp_path / "whole"))
    assert len(uninterrupted) == 9

    original = train_module._Objective.loss
    calls = {"n": 0}

    def crash_at_step_six(self, indices):
        calls["n"] += 1
        if calls["n"] == 6:
            raise KeyboardInterrupt("the worker died")
        return original(self, indices)

    monkeypatch.setattr(train_module._Objective, "loss", crash_at_step_six)
    with pytest.raises(KeyboardInterrupt):
        run(spec(tmp_path / "retried"))
    assert [p.name for p in (tmp_path / "retried" / ".checkpoints").iterdir()] == ["step-4.pt"]
    monkeypatch.setattr(train_module._Objective, "loss", original)

    resumed = run(spec(tmp_path / "retried"))
    assert len(resumed) == 5  # steps 5..9
    assert resumed == pytest.approx(uninterrupted[4:], abs=1e-5)
    whole = load_file(str(tmp_path / "whole" / "adapter_model.safetensors"))
    retried = load_file(str(tmp_path / "retried" / "adapter_model.safetensors"))
    assert all((whole[k] - retried[k]).abs().max().item() < 1e-5 for k in whole)


def test_the_objective_constants_prompt_format_and_max_length_come_from_the_environment_and_learning_rates_default_per_objective(monkeypatch, tmp_path):
    from webrl_torch import modeling
    from webrl_torch.cli import job_and_records, parser
    from webrl_torch.errors import InputError
    from webrl_torch.losses import WebRLConstants

    # The records are read before anything else: every objective finds its kind here.
    data = write_jsonl(tmp_path / "data.jsonl", [*step_records(), orm_record(0, True)])

    def job(*extra: str):
        spec, _ = job_and_records(parser().parse_args(["train", "--base-model", "m", "--data", str(data), "--out", "o", "--device", "cpu", *extra]))
        return spec

    monkeypatch.setenv("WEBRL_TRAIN_OBJECTIVE", "actor-webrl")
    spec = job()
    assert (spec.constants, spec.prompt_format, spec.max_length, spec.learning_rate) == (WebRLConstants(), "webrl-llama3", None, 1e-5)
    for name, value in (
        ("BETA_LOW", "2"),
        ("BETA_HIGH", "3"),
        ("POSITIVE_ADVANTAGE", "0.5"),
        ("NEGATIVE_ADVANTAGE", "-0.2"),
        ("PROMPT_FORMAT", "chat-template"),
        ("MAX_LENGTH", "2048"),
    ):
        monkeypatch.setenv(f"WEBRL_TRAIN_{name}", value)
    spec = job("--max-length", "512")  # the environment wins over the flag
    assert spec.constants == WebRLConstants(beta_low=2.0, beta_high=3.0, positive_advantage=0.5, negative_advantage=-0.2)
    assert (spec.prompt_format, spec.max_length) == ("chat-template", 2048)
    # WebRL's full fine-tune rates with --full-finetune, ten times them for LoRA; a configured rate wins.
    rates = []
    for objective in ("actor-sft", "actor-webrl", "critic", "orm"):
        monkeypatch.setenv("WEBRL_TRAIN_OBJECTIVE", objective)
        rates += [job("--full-finetune").learning_rate, job().learning_rate]
    assert rates == pytest.approx([1e-5, 1e-4, 1e-6, 1e-5, 1e-6, 1e-5, 5e-6, 5e-5])
    # The weights' dtype: fp32 or bf16 as asked; auto is bf16 only where the CPU computes it natively.
    assert (job("--dtype", "float32").model.dtype, job("--dtype", "bfloat16").model.dtype) == (torch.float32, torch.bfloat16)
    assert job().model.dtype == (torch.bfloat16 if modeling._cpu_has_fast_bf16() else torch.float32)
    monkeypatch.setenv("WEBRL_TRAIN_LEARNING_RATE", "3e-4")
    assert job().learning_rate == 3e-4
    monkeypatch.setenv("WEBRL_TRAIN_NEGATIVE_ADVANTAGE", "0.6")
    with pytest.raises(InputError, match="WEBRL_TRAIN_NEGATIVE_ADVANTAGE: expected a negative number"):
        job()
    monkeypatch.setenv("WEBRL_TRAIN_PROMPT_FORMAT", "chatml")
    with pytest.raises(InputError, match="WEBRL_TRAIN_PROMPT_FORMAT: expected webrl-llama3 or chat-template"):
        job()
