"""A tiny Llama-architecture model and a byte-level BPE tokenizer, built locally from a config.

Used by the tests, the benchmark and the LLM campaign test (served by a real vLLM); no weights are
downloaded.

    python -m webrl_torch.testing.tiny --out DIR [--seed N] [--hidden-size N] [--layers N] [--max-position-embeddings N]

The command is cached: when DIR holds a model this builder wrote with the same settings (its stamp,
`webrl-tiny.json`, says so) it prints that it reused it and exits; otherwise it builds into
`DIR.partial` and renames that to DIR, so an interrupted build leaves no half model behind.

What vLLM needs of it, and it has: a head size of 64 (vLLM's CPU attention refuses some smaller ones,
16 among them), a tokenizer that puts BOS before every encoding as Llama-3's does (a TemplateProcessing
post-processor in tokenizer.json, which transformers 5.19 and 5.23 both read back; `add_bos_token` in
tokenizer_config.json as well), and a chat template (ChatML) so the chat endpoint works. The weights
are float32.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from ..atomic_dir import replace_directory

# Bump when the builder writes something different for the same settings: cached models are rebuilt.
BUILDER_VERSION = 2
STAMP = "webrl-tiny.json"
HEAD_DIM = 64

BOS, EOS, PAD = "<s>", "</s>", "<pad>"
IM_START, IM_END = "<|im_start|>", "<|im_end|>"

# ChatML, as SmolLM2 and Qwen write it (no default system turn).
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

# Text in the shape of the actor's prompts and actions, so common words get their own tokens.
_CORPUS = [
    "Task: find the cheapest product in the store and open it.",
    'Round 0 <html> <body> <button id="3"> Search </button> <input id="4" type="text"> </input> </body> </html>',
    'do(action="Click", element="3")',
    'do(action="Type", argument="laptop", element="4")',
    'exit(message="The order total is $24.99")',
    "Did the agent complete the task? Answer YES or NO.",
    "YES",
    "NO",
]


def build_tokenizer():
    """Byte-level BPE over a small corpus; BOS is added before every encoding, as Llama-3's tokenizer does."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE(unk_token=None))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=[BOS, EOS, PAD, IM_START, IM_END],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(_CORPUS * 4, trainer=trainer)
    bos_id = tokenizer.token_to_id(BOS)
    # Written into tokenizer.json, where every transformers version (and vLLM through it) finds it.
    tokenizer.post_processor = processors.TemplateProcessing(single=f"{BOS}:0 $A:0", pair=f"{BOS}:0 $A:0 {BOS}:1 $B:1", special_tokens=[(BOS, bos_id)])
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token=BOS,
        eos_token=EOS,
        pad_token=PAD,
        add_bos_token=True,
        add_eos_token=False,
        chat_template=CHAT_TEMPLATE,
    )


def _settings(seed: int, hidden_size: int, layers: int, max_position_embeddings: int) -> dict:
    return {
        "builder": BUILDER_VERSION,
        "seed": seed,
        "hidden_size": hidden_size,
        "layers": layers,
        "max_position_embeddings": max_position_embeddings,
    }


def build_tiny_model(directory: str | Path, seed: int = 0, hidden_size: int = 128, layers: int = 2, max_position_embeddings: int = 4096) -> Path:
    """Writes a randomly initialised Llama model and its tokenizer into `directory`; returns it.

    Heads of 64 dimensions (`hidden_size // 64` of them, one key/value head); a hidden size that is not
    a multiple of 64 gets a single head of that size (fine for the trainer, maybe not for vLLM's CPU
    attention).
    """
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    directory = Path(directory)
    heads = hidden_size // HEAD_DIM if hidden_size % HEAD_DIM == 0 else 1
    tokenizer = build_tokenizer()
    im_end = tokenizer.convert_tokens_to_ids(IM_END)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 2,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=1,
        head_dim=hidden_size // heads,
        max_position_embeddings=max_position_embeddings,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    # A chat turn ends with <|im_end|>: generation stops there as well as at EOS.
    model.generation_config = GenerationConfig(
        bos_token_id=tokenizer.bos_token_id, eos_token_id=[tokenizer.eos_token_id, im_end], pad_token_id=tokenizer.pad_token_id
    )
    model.save_pretrained(str(directory), safe_serialization=True)
    tokenizer.model_max_length = max_position_embeddings
    tokenizer.save_pretrained(str(directory))
    # BOS comes from tokenizer.json's post-processor: transformers 5 ignores add_bos_token when a
    # tokenizer.json is there (and leaves it out of tokenizer_config.json, and a reloaded tokenizer's
    # `add_bos_token` reads False). The flag is written anyway for readers that look at it.
    config_file = directory / "tokenizer_config.json"
    tokenizer_config = json.loads(config_file.read_text())
    tokenizer_config.update(add_bos_token=True, add_eos_token=False)
    config_file.write_text(json.dumps(tokenizer_config, indent=2) + "\n")
    settings = _settings(seed, hidden_size, layers, max_position_embeddings)
    (directory / STAMP).write_text(json.dumps(settings, indent=2) + "\n")
    return directory


def ensure_tiny_model(directory: str | Path, seed: int = 0, hidden_size: int = 128, layers: int = 2, max_position_embeddings: int = 4096) -> tuple[Path, bool]:
    """The tiny model in `directory`, built unless this builder already wrote it there with the same
    settings; returns (directory, whether it was reused). Built into `directory.partial`, then renamed."""
    directory = Path(directory)
    settings = _settings(seed, hidden_size, layers, max_position_embeddings)
    stamp = directory / STAMP
    if stamp.is_file():
        try:
            if json.loads(stamp.read_text()) == settings:
                return directory, True
        except json.JSONDecodeError:
            pass
    elif directory.exists() and any(directory.iterdir()):
        raise FileExistsError(f"{directory} exists and was not written by this builder (no {STAMP}); remove it or pick another --out")
    partial = directory.with_name(directory.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    build_tiny_model(partial, seed=seed, hidden_size=hidden_size, layers=layers, max_position_embeddings=max_position_embeddings)
    replace_directory(partial, directory)
    return directory, False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m webrl_torch.testing.tiny", description="build the tiny random Llama (cached)")
    parser.add_argument("--out", required=True, help="the model directory (reused when it already holds this build)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hidden-size", type=int, default=128, help="a multiple of 64 for vLLM (heads of 64)")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--max-position-embeddings", type=int, default=4096, help="the model's context (vLLM's default --max-model-len)")
    args = parser.parse_args(argv)
    try:
        directory, reused = ensure_tiny_model(args.out, args.seed, args.hidden_size, args.layers, args.max_position_embeddings)
    except FileExistsError as error:
        print(f"tiny: {error}", file=sys.stderr)
        return 2
    print(f"tiny: {'reusing' if reused else 'built'} {directory}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
