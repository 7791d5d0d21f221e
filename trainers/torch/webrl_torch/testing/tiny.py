"""A tiny Llama-architecture model and a byte-level BPE tokenizer, built locally from a config.

Used by the tests, the benchmark and the local OpenAI-compatible server; no weights are downloaded.
"""
from __future__ import annotations

from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

# Text in the shape of the actor's prompts and actions, so common words get their own tokens.
_CORPUS = [
    "Task: find the cheapest product in the store and open it.",
    'Round 0 <html> <body> <button id="3"> Search </button> <input id="4" type="text"> </input> </body> </html>',
    "do(action=\"Click\", element=\"3\")",
    'do(action="Type", argument="laptop", element="4")',
    'exit(message="The order total is $24.99")',
    "Did the agent complete the task? Answer YES or NO.",
    "YES",
    "NO",
]


def build_tokenizer() -> PreTrainedTokenizerFast:
    tokenizer = Tokenizer(models.BPE(unk_token=None))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<s>", "</s>", "<pad>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(_CORPUS * 4, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, bos_token="<s>", eos_token="</s>", pad_token="<pad>")


def build_tiny_model(directory: str | Path, seed: int = 0, hidden_size: int = 64, layers: int = 2) -> Path:
    """Writes a randomly initialised Llama model and its tokenizer into `directory`; returns it."""
    directory = Path(directory)
    tokenizer = build_tokenizer()
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 2,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=1024,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.save_pretrained(str(directory), safe_serialization=True)
    tokenizer.save_pretrained(str(directory))
    return directory
