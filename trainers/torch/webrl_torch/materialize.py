"""`webrl-torch materialize`: a GGUF file -> an ordinary Hugging Face checkpoint directory.

    webrl-torch materialize --gguf FILE --out DIR [--dtype bfloat16|float32]

transformers reads a GGUF (with the `gguf` package) but marks the model it builds as quantized, and such
a model refuses `save_pretrained`. Here the weights are dequantized at load, a plain model of the same
architecture is built from the file's config without its `quantization_config`, the weights are loaded
into it and cast to `--dtype`, and it is saved with the tokenizer (tokenizer.json, tokenizer_config.json,
the chat template) and the generation config: a directory vLLM serves and PEFT trains on.

Atomic and cached: the checkpoint is written into `DIR.partial` and renamed to DIR once complete; its
last file is `webrl-materialized.json` (the GGUF's name, size and sha256, and the dtype). A DIR whose
marker names the same GGUF and dtype is reused; one materialised from another GGUF or dtype is
replaced; a DIR without the marker is never touched (exit 2).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import struct
import time
from collections.abc import Callable
from pathlib import Path

from .atomic_dir import replace_directory
from .errors import InputError

MARKER = "webrl-materialized.json"
FORMAT = "webrl-torch.materialized/1"
DTYPES = ("bfloat16", "float32")
GGUF_MAGIC = b"GGUF"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while chunk := file.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def check_gguf(path: Path) -> None:
    """Exit 2 unless `path` is a readable file that starts with the GGUF magic."""
    if not path.exists():
        raise InputError(f"{path} --gguf: no such file")
    if not path.is_file():
        raise InputError(f"{path} --gguf: not a file")
    with path.open("rb") as file:
        magic = file.read(4)
    if magic != GGUF_MAGIC:
        raise InputError(f"{path} --gguf: not a GGUF file (it starts with {magic!r}, not {GGUF_MAGIC!r})")


def _recorded(out: Path) -> dict | None:
    """What the marker of a finished checkpoint in `out` says, or None when there is none."""
    try:
        return json.loads((out / MARKER).read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def _size_mb(directory: Path) -> float:
    return sum(f.stat().st_size for f in directory.rglob("*") if f.is_file()) / 1e6


def convert(gguf: Path, out: Path, dtype: str) -> None:
    """Writes the checkpoint (weights, config, generation config, tokenizer) into `out`."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    directory, name = str(gguf.parent), gguf.name
    try:
        loaded = AutoModelForCausalLM.from_pretrained(directory, gguf_file=name, quantization_config=GgufConfig(dequantize=True), dtype=torch.float32)
        tokenizer = AutoTokenizer.from_pretrained(directory, gguf_file=name)
    except (ValueError, KeyError, IndexError, OSError, EOFError, NotImplementedError, struct.error) as error:
        # What a truncated or foreign file raises from the readers (the magic bytes were right).
        raise InputError(f"{gguf} --gguf: transformers cannot load it: {str(error).strip().splitlines()[0]}") from None
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    if hasattr(config, "_model_name_or_path"):  # the GGUF's general.name, which no loader reads back
        del config._model_name_or_path
    config.dtype = dtype
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    weights = {k: v.detach().to(torch.float32) for k, v in loaded.state_dict().items()}
    missing, unexpected = model.load_state_dict(weights, strict=False)
    # A tied output layer may be left out by either side; anything else must match exactly.
    tied = {"lm_head.weight"} if config.tie_word_embeddings else set()
    if set(missing) - tied or set(unexpected) - tied:
        raise InputError(
            f"{gguf} --gguf: its weights do not fit the {type(model).__name__} its config describes (missing {sorted(set(missing) - tied)[:3]}, unexpected {sorted(set(unexpected) - tied)[:3]})"
        )
    model.tie_weights()
    model.generation_config = loaded.generation_config
    del loaded, weights
    model.to(getattr(torch, dtype)).eval()
    # The GGUF's tokenizer says nothing of a length limit; the model's context is the honest one.
    if getattr(config, "max_position_embeddings", None):
        tokenizer.model_max_length = config.max_position_embeddings
    out.mkdir(parents=True)
    model.save_pretrained(str(out), safe_serialization=True)
    tokenizer.save_pretrained(str(out))
    for file in out.iterdir():  # safetensors writes its file owner-only; a server run as another user reads it too
        file.chmod(0o644)


def materialize(gguf: str | Path, out: str | Path, dtype: str = "bfloat16", log: Callable[[str], None] = print) -> tuple[Path, bool]:
    """The checkpoint of `gguf` in `out`, converted unless already there; returns (out, whether reused)."""
    if dtype not in DTYPES:
        raise InputError(f"--dtype: expected one of {', '.join(DTYPES)}, got {dtype!r}")
    source, target = Path(gguf), Path(out)
    check_gguf(source)
    wanted = {"format": FORMAT, "gguf": source.name, "size": source.stat().st_size, "sha256": _sha256(source), "dtype": dtype}
    recorded = _recorded(target)
    if recorded is not None:
        if all(recorded.get(k) == v for k, v in wanted.items()):
            log(f"materialize: reusing {target} ({source.name}, sha256 {wanted['sha256'][:12]}, {dtype})")
            return target, True
        log(f"materialize: {target} holds {recorded.get('gguf')} in {recorded.get('dtype')}; replacing it")
    elif target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise InputError(f"{target} --out: exists and is not a checkpoint webrl-torch materialize wrote (no {MARKER}); remove it or pick another directory")
    started = time.monotonic()
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        convert(source, partial, dtype)
        (partial / MARKER).write_text(json.dumps(wanted, indent=2) + "\n")
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    replace_directory(partial, target)
    log(f"materialize: wrote {target} from {source.name} ({dtype}, {_size_mb(target):.0f} MB) in {time.monotonic() - started:.0f} s")
    return target, False
