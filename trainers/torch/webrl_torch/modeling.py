"""Loading the language model (LoRA or full), the critic (LM + two heads), and reading response log-probs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import torch
from peft import LoraConfig, PeftModel, get_peft_model
from safetensors.torch import load_file, save_file
from torch import nn
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer, PreTrainedTokenizerBase

from .encoding import Batch
from .errors import InputError

HEADS_FILE = "heads.safetensors"
CRITIC_CARD = "critic.json"


@dataclass(frozen=True)
class ModelOptions:
    base_model: str
    lora_rank: int = 16
    lora_alpha: int = 32
    lora_targets: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj")
    full_finetune: bool = False
    gradient_checkpointing: bool = True
    device: str = "cpu"
    dtype: torch.dtype = torch.float32


def _cpu_has_fast_bf16() -> bool:
    """AVX512-BF16 or AMX: there bf16 matmuls run about 1.7x faster than fp32 (docs/torch-trainer.md)."""
    checks = (getattr(torch.cpu, "_is_avx512_bf16_supported", None), getattr(torch.cpu, "_is_amx_tile_supported", None))
    return any(check is not None and check() for check in checks)


def pick_device(requested: str, dtype: str = "auto") -> tuple[str, torch.dtype]:
    """The device and the weights' dtype. `auto`: bf16 where the hardware computes it natively (a GPU
    that supports it, a CPU with AVX512-BF16 or AMX), fp32 elsewhere; LoRA adapters stay fp32 (PEFT)."""
    device = ("cuda" if torch.cuda.is_available() else "cpu") if requested == "auto" else requested
    if dtype == "auto":
        bf16 = torch.cuda.is_bf16_supported() if device.startswith("cuda") else device == "cpu" and _cpu_has_fast_bf16()
        return device, torch.bfloat16 if bf16 else torch.float32
    return device, getattr(torch, dtype)


def load_tokenizer(base_model: str) -> PreTrainedTokenizerBase:
    tokenizer = AutoTokenizer.from_pretrained(base_model)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def _check_same_architecture(base_model: str, checkpoint: Path) -> None:
    """A full checkpoint or an adapter must belong to the base model's architecture (exit 2 otherwise)."""
    base = AutoConfig.from_pretrained(base_model)
    config_file = checkpoint / "config.json"
    if config_file.is_file():
        other = json.loads(config_file.read_text())
        for field in ("model_type", "hidden_size", "num_hidden_layers", "vocab_size"):
            if other.get(field) != getattr(base, field, None):
                raise InputError(f"{config_file} {field}: {other.get(field)} does not match the base model's {getattr(base, field, None)}")
    weights = checkpoint / "adapter_model.safetensors"
    if weights.is_file():
        hidden = base.hidden_size
        for name, tensor in load_file(str(weights)).items():
            if name.endswith("lora_A.weight") and "proj" in name and tensor.shape[1] not in (hidden, base.intermediate_size):
                raise InputError(f"{weights} {name}: input size {tensor.shape[1]} does not fit the base model (hidden size {hidden})")


def load_language_model(options: ModelOptions, init: str | None, trainable: bool) -> nn.Module:
    """The base model, with `init` (an adapter directory or a full checkpoint) applied; LoRA unless full."""
    source = options.base_model
    adapter = None
    if init:
        path = Path(init)
        if not path.is_dir():
            raise InputError(f"{init} init: expected a PEFT adapter directory or a Hugging Face checkpoint directory")
        _check_same_architecture(options.base_model, path)
        if (path / "adapter_config.json").is_file():
            adapter = path
        elif (path / "config.json").is_file():
            source = str(path)
        else:
            raise InputError(f"{init} init: neither adapter_config.json nor config.json is there")
    model = AutoModelForCausalLM.from_pretrained(source, dtype=options.dtype).to(options.device)
    if options.gradient_checkpointing and trainable:
        model.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
        model.config.use_cache = False
    if adapter is not None:
        try:
            model = PeftModel.from_pretrained(model, str(adapter), is_trainable=trainable and not options.full_finetune)
        except (RuntimeError, ValueError) as error:
            raise InputError(f"{adapter} adapter_model.safetensors: {str(error).splitlines()[0]}") from None
        if options.full_finetune:
            model = model.merge_and_unload()
    elif trainable and not options.full_finetune:
        # What vLLM's runtime LoRA loading accepts: no bias, no DoRA, nothing saved whole beside the adapter.
        config = LoraConfig(
            r=options.lora_rank,
            lora_alpha=options.lora_alpha,
            target_modules=list(options.lora_targets),
            lora_dropout=0.0,
            bias="none",
            use_dora=False,
            modules_to_save=None,
            task_type="CAUSAL_LM",
        )
        model = get_peft_model(model, config)
    if trainable and options.gradient_checkpointing and hasattr(model, "enable_input_require_grads"):
        model.enable_input_require_grads()
    if not trainable:
        model.eval()
        model.requires_grad_(False)
    return model


def save_language_model(model: nn.Module, out: Path) -> None:
    """A PEFT adapter directory, or a full HF checkpoint when the whole model was trained."""
    model.save_pretrained(str(out), safe_serialization=True)


def value_head(size: int) -> nn.Sequential:
    """One of the critic's heads: WebRL's MLP (Linear-ReLU-Linear-ReLU-Linear) from the last token's
    hidden state to two classes, every layer with PyTorch's default initialisation. WebRL draws the two
    hidden layers from normal(0, 0.2): on hidden states like SmolLM2's (RMS about 2.4, single features
    near 50) that gives logits of +-30 before any training, a success probability of 1e-29 for every
    state, and a cross-entropy whose gradient vanishes on one label and explodes on the other: the
    trained critics swing between 0 and 1, and the [0.05, 0.75] filter keeps few tasks or none
    (docs/webrl-fidelity.md)."""
    return nn.Sequential(nn.Linear(size, size), nn.ReLU(), nn.Linear(size, size), nn.ReLU(), nn.Linear(size, 2))


class Critic(nn.Module):
    """WebRL's double critic: the LM's last-layer hidden state at the last real token, two heads."""

    def __init__(self, lm: nn.Module, hidden_size: int):
        super().__init__()
        self.lm = lm
        self.head1 = value_head(hidden_size)
        self.head2 = value_head(hidden_size)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        hidden = self.lm(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True).hidden_states[-1]
        last = attention_mask.sum(dim=1) - 1
        state = hidden[torch.arange(hidden.shape[0], device=hidden.device), last].float()
        return self.head1(state), self.head2(state)


def new_critic(options: ModelOptions, init: str | None, seed: int) -> Critic:
    """A critic from an actor (adapter or checkpoint) or the base model, with freshly seeded heads."""
    lm = load_language_model(options, init, trainable=True)
    torch.manual_seed(seed)
    hidden = AutoConfig.from_pretrained(options.base_model).hidden_size
    return Critic(lm, hidden).to(options.device)


def is_critic_checkpoint(path: str) -> bool:
    return (Path(path) / HEADS_FILE).is_file()


def load_critic(options: ModelOptions, path: str, trainable: bool) -> Critic:
    """A critic checkpoint directory: lm/ (adapter or full checkpoint) + heads.safetensors + critic.json."""
    root = Path(path)
    heads_file = root / HEADS_FILE
    if not heads_file.is_file():
        raise InputError(f"{root} critic: {HEADS_FILE} is missing (not a webrl-torch critic checkpoint)")
    hidden = AutoConfig.from_pretrained(options.base_model).hidden_size
    heads = load_file(str(heads_file))
    width = heads.get("head1.0.weight")
    if width is None or width.shape[1] != hidden:
        got = None if width is None else width.shape[1]
        raise InputError(f"{heads_file} head1.0.weight: input size {got} does not match the base model's hidden size {hidden}")
    lm = load_language_model(options, str(root / "lm"), trainable=trainable)
    critic = Critic(lm, hidden)
    critic.head1.load_state_dict({k.removeprefix("head1."): v for k, v in heads.items() if k.startswith("head1.")})
    critic.head2.load_state_dict({k.removeprefix("head2."): v for k, v in heads.items() if k.startswith("head2.")})
    critic.to(options.device)
    if not trainable:
        critic.eval()
        critic.requires_grad_(False)
    return critic


def save_critic(critic: Critic, out: Path, base_model: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    save_language_model(critic.lm, out / "lm")
    heads = {f"head1.{k}": v.detach().cpu().contiguous() for k, v in critic.head1.state_dict().items()}
    heads.update({f"head2.{k}": v.detach().cpu().contiguous() for k, v in critic.head2.state_dict().items()})
    save_file(heads, str(out / HEADS_FILE))
    (out / CRITIC_CARD).write_text(json.dumps({"format": "webrl-torch.critic/1", "baseModel": base_model}, indent=2) + "\n")


def token_log_probs(model: nn.Module, batch: Batch) -> torch.Tensor:
    """log p(token_t | tokens_<t) at every position t >= 1 (position 0 gets 0), in fp32."""
    logits = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits[:, :-1].float()
    picked = torch.log_softmax(logits, dim=-1).gather(-1, batch.input_ids[:, 1:, None]).squeeze(-1)
    return torch.nn.functional.pad(picked, (1, 0))


def response_log_probs(model: nn.Module, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
    """Per row: the sum of the response tokens' log-probs and the number of response tokens."""
    return (token_log_probs(model, batch) * batch.response_mask).sum(dim=1), batch.response_mask.sum(dim=1)
