"""One training job: records in, a PEFT adapter (or full checkpoint, or critic directory) out.

Step checkpoints live in `{out}/.checkpoints/` so a retried job that finds them resumes; they are removed
once the output is written, so the uploaded directory holds only the model.

Data-parallel under `accelerate launch` (or torchrun): each process loads the model on its own device,
takes its share of every batch (the same batches in the same order as one process), and the gradients
are averaged by accelerate's DistributedDataParallel wrapper; only the main process prints progress,
writes step checkpoints and the output. One process runs exactly as without accelerate.

A batch without a single loss row (actor-webrl: no positive-advantage row) takes no optimizer step: AdamW's
momentum and weight decay would otherwise move the weights with no signal. What the job did (steps taken and
skipped, positive rows by source, KL per token) is written beside the model as `training-metrics.json`.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import shutil
import sys
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import torch
from accelerate import Accelerator

from .contract import OBJECTIVES, VARIABLES
from .encoding import Batch, closed, encode_pairs, end_of_turn, model_context
from .errors import InputError, TrainingStopped
from .losses import WEBRL, WebRLConstants, critic_loss, sft_loss, success_probability, trajectory_weights, webrl_actor_loss, webrl_advantage
from .modeling import (
    Critic,
    ModelOptions,
    is_critic_checkpoint,
    load_critic,
    load_language_model,
    load_tokenizer,
    new_critic,
    response_log_probs,
    save_critic,
    save_language_model,
    token_log_probs,
)
from .records import StepRecord, read_examples, read_records, records_kind

CHECKPOINTS = ".checkpoints"
METRICS_FILE = "training-metrics.json"
# Where an actor-webrl job's positive rows came from: this phase's successful trajectories, its other
# rollouts (steps the critic rates above their state), the replay buffer, the demonstrations.
POSITIVE_SOURCES = ("success", "rollout", "replay", "demonstration")


@dataclass(frozen=True)
class JobSpec:
    objective: str
    data: str
    out: str
    model: ModelOptions
    init: str | None = None
    reference: str | None = None
    critic: str | None = None
    data_format: str = "training-records"
    epochs: int = 1
    batch_size: int = 8
    seed: int = 0
    learning_rate: float = 1e-5
    max_length: int | None = None  # tokens per prompt + response; None: the model's context
    prompt_format: str = "webrl-llama3"
    constants: WebRLConstants = WEBRL
    checkpoint_every: int = 50
    max_kl: float = 5.0
    max_grad_norm: float = 1.0
    log_every: int = 1


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _fingerprint(spec: JobSpec) -> str:
    """What a step checkpoint must match to be resumed: the data and every setting of the job."""
    digest = hashlib.sha256(Path(spec.data).read_bytes())
    settings = {k: v for k, v in asdict(spec).items() if k not in ("out", "log_every", "checkpoint_every")}
    digest.update(json.dumps(settings, sort_keys=True, default=str).encode())
    return digest.hexdigest()


class _Objective:
    """What differs between objectives: the trainable module, the per-batch loss, and the output."""

    def __init__(self, spec: JobSpec, records: list | None = None):
        self.spec = spec
        self.tokenizer = load_tokenizer(spec.model.base_model)
        self.max_length = spec.max_length or model_context(spec.model.base_model)
        # The judge answers through a chat endpoint, so its text is always the model's chat template.
        self.end_of_turn = end_of_turn(self.tokenizer, "chat-template" if spec.objective == "orm" else spec.prompt_format)
        self.cut: dict[str, int] = {}  # prompt tokens dropped from the middle, per row (and its next state)
        if spec.data_format == "examples":
            if spec.prompt_format != "webrl-llama3" and spec.objective != "orm":
                raise InputError(
                    f"{spec.data}: examples rows carry states, rendered here only in the webrl-llama3 prompt format; with {spec.prompt_format} send training records (the prompts as rendered)"
                )
            self.records: list = read_examples(spec.data, spec.objective, self._render_chat)
        else:
            self.records = records if records is not None else read_records(spec.data, records_kind(spec.objective))
        if spec.objective == "actor-webrl" and not spec.critic:
            raise InputError("critic: actor-webrl needs the critic checkpoint ({critic} or --critic)")
        if spec.objective == "critic":
            # The critic to continue: {critic}, or {init} when that is a critic checkpoint (a phase's critic
            # job gets the previous critic as {init}); otherwise new heads on the actor in {init} or the base.
            previous = spec.critic or (spec.init if spec.init and is_critic_checkpoint(spec.init) else None)
            self.module = load_critic(spec.model, previous, trainable=True) if previous else new_critic(spec.model, spec.init, spec.seed)
            self.row_weight = trajectory_weights([r.trajectory for r in self.records])
        else:
            self.module = load_language_model(spec.model, spec.init, trainable=True)
        if spec.objective == "orm":
            yes = self.tokenizer("YES", add_special_tokens=False)["input_ids"]
            no = self.tokenizer("NO", add_special_tokens=False)["input_ids"]
            if not yes or not no or yes[0] == no[0]:
                raise InputError(f"{spec.model.base_model} tokenizer: YES and NO must start with different tokens (the judge's score reads the first)")
        if spec.objective == "actor-webrl":
            self._prepare_webrl()

    def _render_chat(self, messages: list[dict[str, str]]) -> str:
        if not self.tokenizer.chat_template:
            raise InputError(
                f"{self.spec.model.base_model} tokenizer: the orm objective needs the model's chat template (the judge is served through a chat endpoint)"
            )
        return self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)

    def _encode(self, ids: list[str], prompts: list[str], responses: list[str] | None) -> Batch:
        """The rows' tokens, each response closed by the end of turn (an empty reply is the end of turn
        alone, as WebRL trains it), or the prompts alone (None: a critic's states); a prompt cut the first
        time is logged."""
        closed_responses = [closed(response, self.end_of_turn) for response in responses] if responses is not None else [""] * len(prompts)
        try:
            # The judge's text is a chat-rendered conversation (served through a chat endpoint).
            batch = encode_pairs(self.tokenizer, prompts, closed_responses, self.max_length, self.spec.model.device, chat=self.spec.objective == "orm")
        except InputError as error:
            raise InputError(f"{self.spec.data} {', '.join(ids)}: {error}") from None
        for row, cut in zip(ids, batch.cut_tokens, strict=True):
            if cut and row not in self.cut:
                self.cut[row] = cut
                if self._main:
                    _log(f"prompt cut: {row} lost {cut} tokens from the middle of its prompt (max length {self.max_length}; its start and end kept)")
        return batch

    @property
    def _main(self) -> bool:
        return os.environ.get("RANK", "0") == "0"

    @torch.no_grad()
    def _prepare_webrl(self) -> None:
        """Advantages from the frozen critic and the reference log-probs, once, before any update."""
        spec = self.spec
        critic = load_critic(spec.model, spec.critic, trainable=False)
        # Records that all carry their refLogprob (scored by the server that rolled them out) need no reference model.
        scored = all(r.ref_logprob is not None for r in self.records)
        reference = load_language_model(spec.model, spec.reference, trainable=False) if spec.reference and not scored else None
        was_training = self.module.training
        self.module.eval()
        advantages, refs, tokens = [], [], []
        for start in range(0, len(self.records), spec.batch_size):
            rows: list[StepRecord] = self.records[start : start + spec.batch_size]
            v1, v2 = (success_probability(h) for h in critic(**self._state_inputs([(r.id, r.prompt) for r in rows])))
            has_next = torch.tensor([1.0 if r.next_prompt is not None else 0.0 for r in rows], device=v1.device)
            nv1, nv2 = (success_probability(h) for h in critic(**self._state_inputs([(f"{r.id} next", r.next_prompt or r.prompt) for r in rows])))
            reward = torch.tensor([r.reward for r in rows], device=v1.device)
            mc_return = torch.tensor([r.mc_return for r in rows], device=v1.device)
            advantages.append(webrl_advantage(v1, v2, nv1, nv2, reward, mc_return, has_next, spec.constants).cpu())
            batch = self._encode([r.id for r in rows], [r.prompt for r in rows], [r.response for r in rows])
            # A record's refLogprob (over the response and its end of turn) is used as is; a missing one is
            # computed with the reference model, or with the untrained init actor (the previous phase's
            # actor, which is WebRL's reference).
            counts = batch.response_mask.sum(dim=1)
            if all(r.ref_logprob is not None for r in rows):
                refs.append(torch.tensor([r.ref_logprob for r in rows]))
            else:
                computed, _ = response_log_probs(reference or self.module, batch)
                refs.append(torch.tensor([r.ref_logprob if r.ref_logprob is not None else computed[i].item() for i, r in enumerate(rows)]))
            tokens.append(counts.cpu())
        self.advantage, self.ref_log_prob, self.tokens = torch.cat(advantages), torch.cat(refs), torch.cat(tokens)
        self.module.train(was_training)
        del critic, reference

    def has_loss_rows(self, indices: list[int]) -> bool:
        """Whether the batch has a row with a loss: actor-webrl's rows without a positive advantage have none
        (WebRL's mask); every row of the other objectives has one. Decided on the whole batch, before it is
        shared out, so every process takes the same decision."""
        return self.spec.objective != "actor-webrl" or bool((self.advantage[torch.tensor(indices)] > 0).any())

    def positive_rows(self) -> dict[str, int] | None:
        """actor-webrl: the rows with a loss (positive advantage), by where they came from; None otherwise."""
        if self.spec.objective != "actor-webrl":
            return None
        counts = dict.fromkeys(POSITIVE_SOURCES, 0)
        for record, advantage in zip(self.records, self.advantage.tolist(), strict=True):
            if advantage > 0:
                counts["success" if record.source == "rollout" and record.mc_return > 0 else record.source] += 1
        return counts

    def _state_inputs(self, states: list[tuple[str, str]]) -> dict:
        """(row id, prompt) pairs as the critic's input: the prompt alone."""
        batch = self._encode([row for row, _ in states], [prompt for _, prompt in states], None)
        return {"input_ids": batch.input_ids, "attention_mask": batch.attention_mask}

    def loss(self, indices: list[int]) -> tuple[torch.Tensor, dict[str, float]]:
        rows = [self.records[i] for i in indices]
        device = self.spec.model.device
        objective = self.spec.objective
        if objective == "critic":
            success = torch.tensor([1 if r.mc_return > 0 else 0 for r in rows], device=device)
            has_next = torch.tensor([1.0 if r.next_prompt is not None else 0.0 for r in rows], device=device)
            # States and next states in one forward pass: DistributedDataParallel allows one per backward.
            states = [(r.id, r.prompt) for r in rows] + [(f"{r.id} next", r.next_prompt or r.prompt) for r in rows]
            both = self.module(**self._state_inputs(states))
            state = tuple(head[: len(rows)] for head in both)
            following = tuple(head[len(rows) :] for head in both)
            loss = critic_loss(state, following, success, has_next, self.row_weight[torch.tensor(indices)].to(device))
            return loss, {"loss": loss.item()}
        batch = self._encode([r.id for r in rows], [r.prompt for r in rows], [r.response for r in rows])
        if objective == "actor-webrl":
            log_prob, _ = response_log_probs(self.module, batch)
            index = torch.tensor(indices)
            advantage = self.advantage[index].to(device)
            return webrl_actor_loss(log_prob, self.ref_log_prob[index].to(device), self.tokens[index].to(device), advantage, self.spec.constants)
        # actor-sft and orm (WebRL fine-tunes its judge as chat SFT on YES / NO and the end of turn).
        loss = sft_loss(token_log_probs(self.module, batch), batch.response_mask)
        return loss, {"loss": loss.item()}

    def save(self, module: torch.nn.Module, out: Path) -> None:
        if isinstance(module, Critic):
            save_critic(module, out, self.spec.model.base_model)
        else:
            save_language_model(module, out)
        self.tokenizer.save_pretrained(str(out / "tokenizer") if isinstance(module, Critic) else str(out))


@dataclass
class _Tally:
    """What the job did, kept in its step checkpoints so a resumed job reports the whole job."""

    taken: int = 0
    skipped: int = 0
    kl_sum: float = 0.0
    kl_max: float = 0.0

    def report(self, objective: _Objective) -> dict:
        """The job's metrics file: the campaign's phase manifest carries it (models/train/trainerMetrics.ts)."""
        measured_kl = objective.spec.objective == "actor-webrl" and self.taken > 0
        return {
            "objective": objective.spec.objective,
            "rows": len(objective.records),
            "optimizerSteps": self.taken,
            "skippedSteps": self.skipped,
            "positiveRows": objective.positive_rows(),
            # Per token of the response, against the reference, averaged over the steps taken (each measured before its update).
            "klPerToken": {"mean": self.kl_sum / self.taken, "maxAbs": self.kl_max} if measured_kl else None,
        }


def _order(count: int, batch_size: int, seed: int, epoch: int) -> list[list[int]]:
    """The batches of one epoch, shuffled by the job's seed (so a resumed job replays the same order)."""
    indices = list(range(count))
    random.Random(seed * 1_000_003 + epoch).shuffle(indices)
    return [indices[i : i + batch_size] for i in range(0, count, batch_size)]


def _shard(indices: list[int], rank: int, processes: int) -> list[int]:
    """This process's rows of a batch: equal contiguous shares, the batch repeated from its start to fill
    the last share (as accelerate's even_batches does), so every process runs every step."""
    if processes == 1:
        return indices
    share = math.ceil(len(indices) / processes)
    filled = (indices * math.ceil(share * processes / len(indices)))[: share * processes]
    return filled[rank * share : (rank + 1) * share]


def _trainable(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {name: p for name, p in module.named_parameters() if p.requires_grad}


def _latest_checkpoint(directory: Path, fingerprint: str) -> Path | None:
    found = sorted(directory.glob("step-*.pt"), key=lambda p: int(p.stem.split("-")[1]))
    for path in reversed(found):
        if torch.load(path, map_location="cpu", weights_only=False).get("fingerprint") == fingerprint:
            return path
    return None


def run(spec: JobSpec, records: list | None = None) -> list[float]:
    """Trains, writes the output into spec.out and returns the loss of every optimizer step (for tests and logs);
    `records` are spec.data's training records when the caller has read them already (the CLI, before torch loads)."""
    if spec.objective not in OBJECTIVES:
        raise InputError(f"{VARIABLES['objective']}: expected one of {', '.join(OBJECTIVES)}, got {spec.objective!r}")
    # The weights' dtype is chosen with the device (modeling.pick_device), so accelerate's mixed precision
    # stays off; the model is placed here, on this process's device when several run.
    accelerator = Accelerator(cpu=spec.model.device == "cpu", device_placement=False, mixed_precision="no")
    main = accelerator.is_main_process
    requested = spec  # the fingerprint's: the device asked for, not each process's
    if accelerator.num_processes > 1:
        spec = replace(spec, model=replace(spec.model, device=str(accelerator.device)))
        if main:
            _log(f"data-parallel over {accelerator.num_processes} processes ({accelerator.distributed_type.value}, {accelerator.device.type})")
    torch.manual_seed(spec.seed)
    objective = _Objective(spec, records)  # every input check happens here, before anything is written to {out}
    out = Path(spec.out)
    parameters = _trainable(objective.module)
    optimizer = torch.optim.AdamW(parameters.values(), lr=spec.learning_rate)
    per_epoch = math.ceil(len(objective.records) / spec.batch_size)
    total = per_epoch * spec.epochs
    fingerprint = _fingerprint(requested)
    checkpoints = out / CHECKPOINTS
    step = 0  # batches done, stepped or skipped
    tally = _Tally()
    if checkpoints.is_dir() and (latest := _latest_checkpoint(checkpoints, fingerprint)):
        state = torch.load(latest, map_location="cpu", weights_only=False)
        with torch.no_grad():
            for name, value in state["trainable"].items():
                parameters[name].copy_(value)
        optimizer.load_state_dict(state["optimizer"])
        torch.set_rng_state(state["rng"])
        step = state["step"]
        tally = _Tally(**state.get("tally", {}))
        if main:
            _log(f"resuming from {latest} (step {step} of {total})")
    objective.module, optimizer = accelerator.prepare(objective.module, optimizer)
    losses: list[float] = []
    metrics: dict[str, float] = {}
    objective.module.train()
    if main:
        print(f"PROGRESS {step / total:.4f} {step}/{total}", flush=True)
    while step < total:
        epoch, position = divmod(step, per_epoch)
        indices = _order(len(objective.records), spec.batch_size, spec.seed, epoch)[position]
        if not objective.has_loss_rows(indices):
            # No signal: an optimizer step would still move the weights (Adam's momentum, weight decay).
            step += 1
            tally.skipped += 1
            if main:
                print(f"PROGRESS {step / total:.4f} {step}/{total}", flush=True)
            continue
        loss, metrics = objective.loss(_shard(indices, accelerator.process_index, accelerator.num_processes))
        if accelerator.num_processes > 1:
            # Every process sees the same numbers, so all stop (or go on) together.
            values = torch.tensor([loss.item(), *metrics.values()], dtype=torch.float64, device=accelerator.device)
            reduced = accelerator.reduce(values, "mean").tolist()
            metrics = dict(zip(metrics, reduced[1:], strict=True))
            value = reduced[0]
        else:
            value = loss.item()
        if not math.isfinite(value):
            raise TrainingStopped(f"stopped at step {step + 1} of {total}: the loss is {value} (last metrics: {json.dumps(metrics)})")
        if "kl_per_token" in metrics and abs(metrics["kl_per_token"]) > spec.max_kl:
            raise TrainingStopped(
                f"stopped at step {step + 1} of {total}: KL to the reference diverged, {metrics['kl_per_token']:.3f} nats per token > {spec.max_kl} (last metrics: {json.dumps(metrics)})"
            )
        optimizer.zero_grad()
        accelerator.backward(loss)
        accelerator.clip_grad_norm_(list(parameters.values()), spec.max_grad_norm)
        optimizer.step()
        step += 1
        tally.taken += 1
        if "kl_per_token" in metrics:
            tally.kl_sum += metrics["kl_per_token"]
            tally.kl_max = max(tally.kl_max, abs(metrics["kl_per_token"]))
        losses.append(value)
        if main and (step % spec.log_every == 0 or step == total):
            _log(f"step {step}/{total} " + " ".join(f"{k}={v:.6g}" for k, v in metrics.items()))
        if main:
            print(f"PROGRESS {step / total:.4f} {step}/{total}", flush=True)
        if main and step % spec.checkpoint_every == 0 and step < total:
            checkpoints.mkdir(parents=True, exist_ok=True)
            partial = checkpoints / f"step-{step}.pt.partial"
            torch.save(
                {
                    "fingerprint": fingerprint,
                    "step": step,
                    "trainable": {k: v.detach().cpu() for k, v in parameters.items()},
                    "optimizer": optimizer.state_dict(),
                    "rng": torch.get_rng_state(),
                    "tally": asdict(tally),
                },
                partial,
            )
            partial.rename(checkpoints / f"step-{step}.pt")
    objective.module.eval()
    if main:
        objective.save(accelerator.unwrap_model(objective.module), out)
        (out / METRICS_FILE).write_text(json.dumps(tally.report(objective), indent=2) + "\n", encoding="utf-8")
        shutil.rmtree(checkpoints, ignore_errors=True)
        if objective.cut:
            _log(
                f"prompt cut: {len(objective.cut)} prompts lost {sum(objective.cut.values())} tokens from their middles in all (max length {objective.max_length})"
            )
        skipped = f", {tally.skipped} batches without a loss row skipped" if tally.skipped else ""
        _log(f"wrote {spec.objective} to {out} after {tally.taken} optimizer steps{skipped}" + (f" (last metrics: {json.dumps(metrics)})" if metrics else ""))
    accelerator.wait_for_everyone()
    return losses
