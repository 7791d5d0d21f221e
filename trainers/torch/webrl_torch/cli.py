"""`webrl-torch`: the external-trainer contract of webrl-temporal (models/remote/externalTrainer.ts).

    webrl-torch train --base-model PATH --data {data} --out {out} [--init {init}] [--reference {reference}] [--critic {critic}]
    webrl-torch serve-critic --base-model PATH [--critic DIR] [--checkpoints ROOT] [--port 8100]
    webrl-torch materialize --gguf FILE --out DIR [--dtype bfloat16|float32]   (GGUF -> HF checkpoint, cached)
    webrl-torch export-webrl --items FILE.json --out FILE.pt --seed N   (the file WebRL's trainer torch.loads)
    accelerate launch --multi_gpu --num_processes N -m webrl_torch.cli train ...   (data-parallel)

The job's settings come from WEBRL_TRAIN_* (see docs/torch-trainer.md); flags carry what the environment
does not. Exit codes: 0 done, 2 bad input (one line naming the file and field, nothing written to
{out}), 3 the run went wrong (NaN loss, diverging KL), with the step and the last metrics.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

from .contract import DATA_FORMATS, OBJECTIVES, PROMPT_FORMATS, VARIABLES
from .errors import InputError, TrainingStopped
from .materialize import DTYPES, materialize
from .records import SCHEMA_VERSION, read_records, records_kind

WEIGHT_DTYPES = ("auto", *DTYPES)  # the base weights' dtype in train and serve-critic


def _env(name: str, parse: Callable[[str], object], default: object, valid: Callable[[object], bool], expected: str) -> object:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = parse(raw)
    except ValueError:
        value = None
    if value is None or not valid(value):
        raise InputError(f"{name}: expected {expected}, got {raw!r}")
    return value


# Learning rates when WEBRL_TRAIN_LEARNING_RATE and --learning-rate are unset. Full fine-tuning: WebRL's
# (RL actor and critic 1e-6, scripts/config/main/default.yaml; SFT 1e-5 and ORM 5e-6, its LLaMA-Factory
# configs). LoRA: ten times those, the usual ratio between a LoRA rate and a full fine-tune's.
FULL_FINETUNE_LEARNING_RATES = {"actor-sft": 1e-5, "actor-webrl": 1e-6, "critic": 1e-6, "orm": 5e-6}
LORA_LEARNING_RATES = {"actor-sft": 1e-4, "actor-webrl": 1e-5, "critic": 1e-5, "orm": 5e-5}


# Objectives whose adapter a vLLM may load at run time (the critic's LM is served by serve-critic).
SERVED_OBJECTIVES = ("actor-sft", "actor-webrl", "orm")


def check_servable(args: argparse.Namespace, objective: str, max_lora_rank: int | None) -> None:
    """With the serving vLLM's --max-lora-rank known, refuse a job whose adapter vLLM would refuse."""
    if max_lora_rank is None or objective not in SERVED_OBJECTIVES:
        return
    if args.full_finetune:
        raise InputError(
            f"--full-finetune with --max-lora-rank {max_lora_rank}: vLLM's runtime LoRA loading needs a LoRA adapter, and --full-finetune writes a full checkpoint"
        )
    if args.lora_rank > max_lora_rank:
        raise InputError(f"--lora-rank {args.lora_rank} is above the serving vLLM's --max-lora-rank {max_lora_rank}: vLLM would refuse the adapter")
    # A job that continues an adapter keeps that adapter's settings, whatever --lora-rank says.
    config_file = Path(args.init) / "adapter_config.json" if args.init else None
    if config_file is None or not config_file.is_file():
        return
    try:
        config = json.loads(config_file.read_text())
    except json.JSONDecodeError as error:
        raise InputError(f"{config_file}: not JSON ({error.msg})") from None
    ranks = [config.get("r") or 0, *(config.get("rank_pattern") or {}).values()]
    if max(ranks) > max_lora_rank:
        raise InputError(
            f"{config_file} r: {max(ranks)} is above the serving vLLM's --max-lora-rank {max_lora_rank}: vLLM would refuse the adapter this job continues"
        )
    for field, allowed, reason in (
        ("bias", ("none", None), "vLLM loads no LoRA bias"),
        ("use_dora", (False, None), "vLLM does not load DoRA adapters"),
        ("modules_to_save", (None, []), "vLLM does not load modules saved whole"),
    ):
        if config.get(field) not in allowed:
            raise InputError(f"{config_file} {field}: {config.get(field)!r}: {reason}")


def job_and_records(args: argparse.Namespace):
    """The JobSpec from the command line and WEBRL_TRAIN_*, and its training records read and checked (None
    for examples, which need the model's tokenizer): every value is checked before any work, and what needs
    no model before torch is imported (seconds on a CPU), so bad input fails at once."""
    objective = os.environ.get(VARIABLES["objective"]) or args.objective
    if objective not in OBJECTIVES:
        raise InputError(f"{VARIABLES['objective']}: expected one of {', '.join(OBJECTIVES)}, got {objective!r}")
    _env(VARIABLES["recordSchemaVersion"], int, SCHEMA_VERSION, lambda v: v == SCHEMA_VERSION, f"{SCHEMA_VERSION} (the record schema this trainer reads)")
    # Returns arrive computed in the records (mcReturn); gamma is checked so a bad value is still caught.
    _env(VARIABLES["gamma"], float, 0.9, lambda v: 0 < v <= 1, "a number in (0, 1]")
    data_format = _env(VARIABLES["dataFormat"], str, DATA_FORMATS[0], lambda v: v in DATA_FORMATS, " or ".join(DATA_FORMATS))
    records = read_records(args.data, records_kind(objective)) if data_format == "training-records" else None
    max_lora_rank = _env(VARIABLES["maxLoraRank"], int, args.max_lora_rank, lambda v: v >= 1, "an integer >= 1 (the serving vLLM's --max-lora-rank)")
    if max_lora_rank is not None and max_lora_rank < 1:
        raise InputError(f"--max-lora-rank: expected an integer >= 1, got {max_lora_rank}")
    check_servable(args, objective, max_lora_rank)
    prompt_format = _env(VARIABLES["promptFormat"], str, PROMPT_FORMATS[0], lambda v: v in PROMPT_FORMATS, " or ".join(PROMPT_FORMATS))
    max_length = _env(VARIABLES["maxLength"], int, args.max_length, lambda v: v >= 2, "an integer >= 2 (tokens per prompt + response)")
    if max_length is not None and max_length < 2:
        raise InputError(f"--max-length: expected an integer >= 2, got {max_length}")
    from .losses import WEBRL, WebRLConstants
    from .modeling import ModelOptions, pick_device
    from .train import JobSpec

    constants = WebRLConstants(
        beta_low=_env(VARIABLES["betaLow"], float, WEBRL.beta_low, lambda v: v > 0, "a positive number"),
        beta_high=_env(VARIABLES["betaHigh"], float, WEBRL.beta_high, lambda v: v > 0, "a positive number"),
        positive_advantage=_env(VARIABLES["positiveAdvantage"], float, WEBRL.positive_advantage, lambda v: v > 0, "a positive number"),
        negative_advantage=_env(VARIABLES["negativeAdvantage"], float, WEBRL.negative_advantage, lambda v: v < 0, "a negative number"),
    )
    learning_rate = (
        args.learning_rate if args.learning_rate is not None else (FULL_FINETUNE_LEARNING_RATES if args.full_finetune else LORA_LEARNING_RATES)[objective]
    )
    device, dtype = pick_device(args.device, args.dtype)
    spec = JobSpec(
        objective=objective,
        data=args.data,
        out=args.out,
        model=ModelOptions(
            base_model=args.base_model,
            lora_rank=args.lora_rank,
            lora_alpha=args.lora_alpha,
            lora_targets=tuple(t for t in args.lora_targets.split(",") if t),
            full_finetune=args.full_finetune,
            gradient_checkpointing=not args.no_gradient_checkpointing,
            device=device,
            dtype=dtype,
        ),
        init=args.init or None,
        reference=args.reference or None,
        critic=args.critic or None,
        data_format=data_format,
        epochs=_env(VARIABLES["epochs"], int, 1, lambda v: v >= 1, "an integer >= 1"),
        batch_size=_env(VARIABLES["batchSize"], int, 8, lambda v: v >= 1, "an integer >= 1"),
        seed=_env(VARIABLES["seed"], int, 0, lambda v: v >= 0, "an integer >= 0"),
        learning_rate=_env(VARIABLES["learningRate"], float, learning_rate, lambda v: v > 0, "a positive number"),
        max_length=max_length,
        prompt_format=prompt_format,
        constants=constants,
        checkpoint_every=args.checkpoint_every,
        max_kl=args.max_kl,
        max_grad_norm=args.max_grad_norm,
    )
    return spec, records


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="webrl-torch", description="WebRL's objectives in PyTorch for webrl-temporal")
    commands = root.add_subparsers(dest="command", required=True)
    train = commands.add_parser("train", help="one training job (the external-trainer contract)")
    train.add_argument("--base-model", required=True, help="Hugging Face model directory (or hub name) the adapters belong to")
    train.add_argument("--data", required=True, help="{data}: the training records (JSONL, schemaVersion 1)")
    train.add_argument("--out", required=True, help="{out}: the output directory")
    train.add_argument("--init", help="{init}: adapter directory or full checkpoint to start from")
    train.add_argument("--reference", help="{reference}: reference actor for records without refLogprob")
    train.add_argument("--critic", help="{critic}: critic checkpoint directory (actor-webrl; critic to continue)")
    train.add_argument("--objective", help="used when WEBRL_TRAIN_OBJECTIVE is not set")
    train.add_argument("--lora-rank", type=int, default=16)
    train.add_argument("--lora-alpha", type=int, default=32)
    train.add_argument("--lora-targets", default="q_proj,k_proj,v_proj,o_proj", help="comma-separated module names")
    train.add_argument("--full-finetune", action="store_true", help="train every weight and write a full checkpoint")
    train.add_argument(
        "--max-lora-rank",
        type=int,
        help="the serving vLLM's --max-lora-rank (WEBRL_TRAIN_MAX_LORA_RANK, when set, wins): a job whose adapter vLLM would refuse exits 2 before any work",
    )
    train.add_argument("--no-gradient-checkpointing", action="store_true")
    train.add_argument("--learning-rate", type=float, help="used when WEBRL_TRAIN_LEARNING_RATE is not set (default: per objective, docs/torch-trainer.md)")
    train.add_argument(
        "--max-length",
        type=int,
        help="tokens per prompt + response, used when WEBRL_TRAIN_MAX_LENGTH is not set (default: the model's context); a longer prompt loses its middle",
    )
    train.add_argument("--checkpoint-every", type=int, default=50, help="steps between resumable checkpoints in {out}/.checkpoints")
    train.add_argument("--max-kl", type=float, default=5.0, help="stop when |log pi - log pi_ref| per token exceeds this")
    train.add_argument("--max-grad-norm", type=float, default=1.0)
    train.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:1 ...")
    train.add_argument("--dtype", choices=WEIGHT_DTYPES, default="auto", help="the base weights' dtype; auto: bf16 where the GPU or CPU computes it natively")
    critic = commands.add_parser("serve-critic", help="serve a critic checkpoint over the project's http critic protocol")
    critic.add_argument("--base-model", required=True)
    critic.add_argument("--critic", help="the critic checkpoint directory (the critic objective's {out}) of requests that name none")
    critic.add_argument(
        "--checkpoints",
        help="a directory whose critic checkpoints requests may name (their path under it): each is loaded in place of the one held",
    )
    critic.add_argument("--host", default="127.0.0.1")
    critic.add_argument("--port", type=int, default=8100, help="0 picks a free port (printed on stderr)")
    critic.add_argument("--max-length", type=int, help="tokens per state (default: the model's context); a longer prompt loses its middle")
    critic.add_argument("--batch-size", type=int, default=8)
    critic.add_argument("--api-key-env", help="require Authorization: Bearer <value of this variable>")
    critic.add_argument("--device", default="auto")
    critic.add_argument("--dtype", choices=WEIGHT_DTYPES, default="auto")
    gguf = commands.add_parser("materialize", help="a GGUF file -> an ordinary Hugging Face checkpoint directory (atomic, cached)")
    gguf.add_argument("--gguf", required=True, help="the .gguf file")
    gguf.add_argument("--out", required=True, help="the checkpoint directory (reused when it already holds this GGUF in this dtype)")
    gguf.add_argument("--dtype", choices=DTYPES, default="bfloat16", help="the saved weights' dtype")
    webrl_file = commands.add_parser("export-webrl", help="steps (JSON) -> the file THUDM/WebRL's trainer reads with torch.load, shuffled by --seed")
    webrl_file.add_argument("--items", required=True, help="a JSON list of trajectories (lists of steps), or of steps when --out's name holds _filter")
    webrl_file.add_argument("--out", required=True, help="the .pt file (WebRL's loader reads a flat step list only from a name holding _filter)")
    webrl_file.add_argument("--seed", type=int, required=True, help="the shuffle's seed (WebRL's loader keeps the list's last 5%% for validation)")
    return root


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        if args.command == "train":
            spec, records = job_and_records(args)  # before the trainer's imports: bad input fails in a second
            from .train import run

            run(spec, records)
        elif args.command == "serve-critic":
            from .critic_server import serve
            from .modeling import ModelOptions, pick_device

            device, dtype = pick_device(args.device, args.dtype)
            model = ModelOptions(base_model=args.base_model, gradient_checkpointing=False, device=device, dtype=dtype)
            serve(model, args.critic, args.host, args.port, args.max_length, args.batch_size, args.api_key_env, args.checkpoints)
        elif args.command == "materialize":
            materialize(args.gguf, args.out, args.dtype, log=lambda line: print(line, flush=True))
        elif args.command == "export-webrl":
            from .webrl_file import write_webrl_file

            steps = write_webrl_file(args.items, args.out, args.seed)
            print(f"export-webrl: {steps} steps written to {args.out} (shuffled with seed {args.seed})", flush=True)
        return 0
    except (InputError, TrainingStopped) as error:
        if os.environ.get("RANK", "0") == "0":  # under accelerate launch every process stops; one says why
            print(f"webrl-torch: {error}", file=sys.stderr, flush=True)
        return error.exit_code


if __name__ == "__main__":
    sys.exit(main())
