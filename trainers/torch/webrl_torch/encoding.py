"""Prompt + response as token ids: the response closed by its end-of-turn text, the length bounded by the
model's context, a too-long prompt cut in its middle (its head, BOS and task instruction, and its tail, the
generation prompt, survive), every cut counted."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from transformers import AutoConfig, PreTrainedTokenizerBase

from .errors import InputError

# The released WebRL checkpoints' end of turn (webrl-llama3); WebRL appends it to every action it trains.
LLAMA3_END_OF_TURN = "<|eot_id|>"
_PROBE = "\u2063webrl-probe\u2063"


def end_of_turn(tokenizer: PreTrainedTokenizerBase, prompt_format: str) -> str:
    """The text that closes an assistant reply: `<|eot_id|>` for webrl-llama3; for chat-template what the
    tokenizer's template writes right after an assistant message's content, up to the first whitespace
    (ChatML's `<|im_end|>`, not its newline), else the tokenizer's EOS."""
    if prompt_format == "webrl-llama3":
        return LLAMA3_END_OF_TURN
    if not tokenizer.chat_template:
        raise InputError(f"{tokenizer.name_or_path} tokenizer: chat-template prompt format, but the tokenizer has no chat template")
    rendered = tokenizer.apply_chat_template([{"role": "user", "content": "x"}, {"role": "assistant", "content": _PROBE}], tokenize=False)
    after = rendered.split(_PROBE, 1)[1] if _PROBE in rendered else ""
    closing = after.lstrip().split()[0] if after.strip() else ""
    if closing:
        return closing
    if tokenizer.eos_token:
        return tokenizer.eos_token
    raise InputError(f"{tokenizer.name_or_path} tokenizer: its chat template writes nothing after an assistant message and it has no EOS token")


def model_context(base_model: str) -> int:
    """The model's context length in tokens (config max_position_embeddings)."""
    config = AutoConfig.from_pretrained(base_model)
    length = getattr(config, "max_position_embeddings", None)
    if not isinstance(length, int) or length < 2:
        raise InputError(f"{base_model} config.json max_position_embeddings: expected the context length, got {length!r}; set the max length explicitly")
    return length


def prompt_ids(tokenizer: PreTrainedTokenizerBase, prompt: str, chat: bool = False) -> list[int]:
    """The prompt's tokens as the server tokenises it: a completion prompt with the tokenizer's special
    tokens (BOS) unless its text already starts with BOS, so there is never a double BOS; a conversation
    the chat endpoint rendered with the chat template as it is (the template writes BOS where it wants one)."""
    bos = tokenizer.bos_token
    return tokenizer(prompt, add_special_tokens=not chat and not (bos and prompt.startswith(bos)))["input_ids"]


def cut_middle(ids: list[int], keep: int) -> list[int]:
    """`keep` tokens of `ids`: its first half (rounded up) and its last half, the middle dropped."""
    if len(ids) <= keep:
        return ids
    head = (keep + 1) // 2
    return ids[:head] + ids[len(ids) - (keep - head) :]


@dataclass
class Batch:
    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    response_mask: torch.Tensor  # 1 on the positions whose token belongs to the response
    cut_tokens: list[int]  # per row, the prompt tokens the middle cut dropped (0: none)


def closed(response: str, eot: str) -> str:
    """The response with its end-of-turn text, as WebRL trains it (appended unless already there)."""
    return response if response.endswith(eot) else response + eot


def encode_pairs(tokenizer: PreTrainedTokenizerBase, prompts: list[str], responses: list[str], max_length: int, device: str, chat: bool = False) -> Batch:
    """Prompt + response token ids, right-padded (`chat`: the prompts are chat-rendered conversations, see
    prompt_ids). The response is kept whole; a prompt that leaves it no room loses its middle. An empty
    response (a critic's state) is the prompt alone."""
    rows = []
    for prompt, response in zip(prompts, responses, strict=True):
        ids = prompt_ids(tokenizer, prompt, chat)
        response_ids = tokenizer(response, add_special_tokens=False)["input_ids"] if response else []
        room = max_length - len(response_ids)
        if room < 2:
            raise InputError(f"a response of {len(response_ids)} tokens leaves no room for its prompt in the max length {max_length}")
        kept = cut_middle(ids, room)
        rows.append((kept + response_ids, len(kept), len(ids) - len(kept)))
    width = max(len(ids) for ids, _, _ in rows)
    pad = tokenizer.pad_token_id
    input_ids = torch.full((len(rows), width), pad, dtype=torch.long)
    attention = torch.zeros((len(rows), width), dtype=torch.long)
    response = torch.zeros((len(rows), width), dtype=torch.float32)
    for i, (ids, prompt_length, _) in enumerate(rows):
        input_ids[i, : len(ids)] = torch.tensor(ids)
        attention[i, : len(ids)] = 1
        response[i, prompt_length : len(ids)] = 1
    return Batch(input_ids.to(device), attention.to(device), response.to(device), [cut for _, _, cut in rows])
