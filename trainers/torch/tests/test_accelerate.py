"""Data-parallel through `accelerate launch`: two CPU processes (gloo) go on with a job one process began
and end with the weights one process alone trains."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import orm_record, write_jsonl
from safetensors.torch import load_file

from webrl_torch import train as train_module
from webrl_torch.modeling import ModelOptions
from webrl_torch.train import JobSpec, run

SETTINGS = {
    "WEBRL_TRAIN_OBJECTIVE": "orm",
    "WEBRL_TRAIN_EPOCHS": "2",
    "WEBRL_TRAIN_BATCH_SIZE": "4",
    "WEBRL_TRAIN_SEED": "5",
    "WEBRL_TRAIN_LEARNING_RATE": "0.01",
}


def accelerate() -> str:
    # The launcher installed beside this interpreter (the trainer's environment).
    return shutil.which("accelerate", path=str(Path(sys.executable).parent)) or "accelerate"


def test_accelerate_launch_with_two_cpu_processes_resumes_a_job_and_trains_the_weights_one_process_trains(tiny_model, tmp_path, monkeypatch):
    # 8 rows, batches of 4, 2 epochs: 4 steps. With 2 processes each takes 2 rows of a batch; the ORM loss
    # is a mean over rows, so the averaged gradients are the whole batch's.
    data = write_jsonl(tmp_path / "data.jsonl", [orm_record(i, i % 2 == 0) for i in range(8)])

    def spec(out: Path) -> JobSpec:
        model = ModelOptions(base_model=str(tiny_model), lora_rank=4, lora_alpha=8, gradient_checkpointing=False)
        return JobSpec(
            objective="orm", data=str(data), out=str(out), model=model, epochs=2, batch_size=4, seed=5, learning_rate=0.01, max_length=256, checkpoint_every=2
        )

    with monkeypatch.context() as patch:
        patch.setattr(train_module.shutil, "rmtree", lambda *args, **kwargs: None)  # keep the step checkpoints
        run(spec(tmp_path / "alone"))
    alone = load_file(str(tmp_path / "alone" / "adapter_model.safetensors"))
    assert any(alone[k].abs().max().item() > 0 for k in alone if "lora_B" in k)  # it trained

    # The checkpoint one process wrote after step 2 of 4, where a job stopped there would have left it ...
    out = tmp_path / "launched"
    (out / ".checkpoints").mkdir(parents=True)
    shutil.copy(tmp_path / "alone" / ".checkpoints" / "step-2.pt", out / ".checkpoints" / "step-2.pt")

    # ... and two processes launched by accelerate go on from it.
    command = [
        accelerate(),
        "launch",
        "--multi_gpu",
        "--num_processes",
        "2",
        "--num_machines",
        "1",
        "--mixed_precision",
        "no",
        "--dynamo_backend",
        "no",
        "-m",
        "webrl_torch.cli",
        "train",
        "--base-model",
        str(tiny_model),
        "--data",
        str(data),
        "--out",
        str(out),
        "--lora-rank",
        "4",
        "--lora-alpha",
        "8",
        "--device",
        "cpu",
        "--dtype",
        "float32",
        "--no-gradient-checkpointing",
        "--max-length",
        "256",
        "--checkpoint-every",
        "2",
    ]
    result = subprocess.run(command, env={**os.environ, **SETTINGS}, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "data-parallel over 2 processes (MULTI_CPU, cpu)" in result.stderr
    assert "step-2.pt (step 2 of 4)" in result.stderr
    # Progress and the output come from the main process only.
    assert [line for line in result.stdout.splitlines() if line.startswith("PROGRESS")] == ["PROGRESS 0.5000 2/4", "PROGRESS 0.7500 3/4", "PROGRESS 1.0000 4/4"]
    assert result.stderr.count("wrote orm to") == 1
    assert not (out / ".checkpoints").exists()
    launched = load_file(str(out / "adapter_model.safetensors"))
    assert launched.keys() == alone.keys()
    assert max((launched[k] - alone[k]).abs().max().item() for k in alone) < 1e-5
