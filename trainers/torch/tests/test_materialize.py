"""webrl-torch materialize: a GGUF becomes a plain HF checkpoint (same logits, same tokenizer), atomically and cached.

The GGUF is written here from the tiny Llama, the way llama.cpp's converter lays a Llama out (its
tensor names, q/k rows permuted for its rotary layout, a byte-level BPE vocabulary in the metadata), so
the test needs no download. The real SmolLM2 file goes through the same code in environment.ts's
ensureSmolLM2.
"""

import json
from pathlib import Path

import gguf
import numpy as np
import pytest
import torch
from safetensors.torch import load_file
from transformers import AutoModelForCausalLM, AutoTokenizer

from webrl_torch.cli import main
from webrl_torch.materialize import MARKER, materialize

TEXT = 'Task: find the cheapest product. do(action="Click", element="3")'

_NAMES = {
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
    "input_layernorm": "attn_norm",
    "post_attention_layernorm": "ffn_norm",
}


def _permute(weights: np.ndarray, heads: int) -> np.ndarray:
    """llama.cpp's reordering of q/k rows (its rotary embedding pairs neighbours, HF's pairs halves)."""
    return weights.reshape(heads, 2, weights.shape[0] // heads // 2, *weights.shape[1:]).swapaxes(1, 2).reshape(weights.shape)


def write_gguf(model_dir: Path, path: Path) -> Path:
    config = json.loads((model_dir / "config.json").read_text())
    tokenizer = json.loads((model_dir / "tokenizer.json").read_text())
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("tiny llama")
    writer.add_context_length(config["max_position_embeddings"])
    writer.add_embedding_length(config["hidden_size"])
    writer.add_block_count(config["num_hidden_layers"])
    writer.add_feed_forward_length(config["intermediate_size"])
    writer.add_head_count(config["num_attention_heads"])
    writer.add_head_count_kv(config["num_key_value_heads"])
    writer.add_rope_dimension_count(config["head_dim"])
    writer.add_rope_freq_base(config["rope_parameters"]["rope_theta"])
    writer.add_layer_norm_rms_eps(config["rms_norm_eps"])
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    vocab = tokenizer["model"]["vocab"]
    tokens = sorted(vocab, key=vocab.get)
    special = {t["content"] for t in tokenizer["added_tokens"] if t["special"]}
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list(tokens)
    writer.add_token_types([gguf.TokenType.CONTROL if t in special else gguf.TokenType.NORMAL for t in tokens])
    writer.add_token_merges([" ".join(m) if isinstance(m, list) else m for m in tokenizer["model"]["merges"]])
    writer.add_bos_token_id(config["bos_token_id"])
    writer.add_eos_token_id(config["eos_token_id"])
    writer.add_pad_token_id(config["pad_token_id"])
    writer.add_add_bos_token(True)
    writer.add_chat_template((model_dir / "chat_template.jinja").read_text())
    for name, tensor in load_file(str(model_dir / "model.safetensors")).items():
        array = tensor.float().numpy()
        if name == "model.embed_tokens.weight":
            gguf_name = "token_embd.weight"
        elif name == "model.norm.weight":
            gguf_name = "output_norm.weight"
        elif name == "lm_head.weight":
            gguf_name = "output.weight"
        else:
            _, _, layer, module = name.removesuffix(".weight").split(".", 3)
            gguf_name = f"blk.{layer}.{_NAMES[module]}.weight"
            if module == "self_attn.q_proj":
                array = _permute(array, config["num_attention_heads"])
            elif module == "self_attn.k_proj":
                array = _permute(array, config["num_key_value_heads"])
        writer.add_tensor(gguf_name, np.ascontiguousarray(array))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


@pytest.fixture(scope="module")
def tiny_gguf(tiny_model, tmp_path_factory) -> Path:
    return write_gguf(tiny_model, tmp_path_factory.mktemp("gguf") / "tiny-llama.F32.gguf")


def logits(model_dir: Path, ids: list[int]) -> torch.Tensor:
    model = AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch.float32)
    with torch.no_grad():
        return model(input_ids=torch.tensor([ids])).logits


def test_a_gguf_becomes_a_plain_checkpoint_with_its_weights_tokenizer_and_chat_template_then_is_reused(tiny_model, tiny_gguf, tmp_path):
    out = tmp_path / "models" / "tiny"
    said: list[str] = []
    assert materialize(tiny_gguf, out, "float32", log=said.append) == (out, False)
    assert "wrote" in said[-1]
    config = json.loads((out / "config.json").read_text())
    assert "quantization_config" not in config and "_model_name_or_path" not in config
    assert config["model_type"] == "llama" and config["head_dim"] == 64 and config["dtype"] == "float32"
    assert {"model.safetensors", "config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json", "chat_template.jinja", MARKER} <= {
        p.name for p in out.iterdir()
    }
    marker = json.loads((out / MARKER).read_text())
    assert marker["gguf"] == tiny_gguf.name and marker["size"] == tiny_gguf.stat().st_size and len(marker["sha256"]) == 64
    assert not (out.parent / "tiny.partial").exists()

    original, converted = AutoTokenizer.from_pretrained(str(tiny_model)), AutoTokenizer.from_pretrained(str(out))
    ids = original(TEXT).input_ids
    assert converted(TEXT).input_ids == ids and ids[0] == converted.bos_token_id  # BOS added, as the GGUF says
    assert (logits(out, ids) - logits(tiny_model, ids)).abs().max().item() < 1e-5  # q/k un-permuted, every weight in place
    turn = [{"role": "user", "content": "hi"}]
    assert converted.apply_chat_template(turn, tokenize=False, add_generation_prompt=True) == original.apply_chat_template(
        turn, tokenize=False, add_generation_prompt=True
    )

    written = (out / "model.safetensors").stat().st_mtime_ns
    assert materialize(tiny_gguf, out, "float32", log=said.append) == (out, True)
    assert said[-1].startswith(f"materialize: reusing {out}") and (out / "model.safetensors").stat().st_mtime_ns == written

    # Another dtype (or another GGUF) replaces the checkpoint, through DIR.partial again.
    assert materialize(tiny_gguf, out, "bfloat16", log=said.append) == (out, False)
    assert json.loads((out / "config.json").read_text())["dtype"] == "bfloat16"
    assert json.loads((out / MARKER).read_text())["dtype"] == "bfloat16"
    assert sorted(p.name for p in out.parent.iterdir()) == ["tiny"]


def run_cli(capsys, *argv: str) -> tuple[int, str]:
    code = main(["materialize", *argv])
    return code, capsys.readouterr().err.strip()


def test_a_missing_file_or_one_that_is_no_gguf_exits_2_with_one_line_and_writes_nothing(capsys, tmp_path):
    out = tmp_path / "out"
    code, error = run_cli(capsys, "--gguf", str(tmp_path / "absent.gguf"), "--out", str(out))
    assert code == 2 and error == f"webrl-torch: {tmp_path / 'absent.gguf'} --gguf: no such file"
    text = tmp_path / "model.gguf"
    text.write_text("not a model\n")
    code, error = run_cli(capsys, "--gguf", str(text), "--out", str(out))
    assert code == 2 and "not a GGUF file" in error and len(error.splitlines()) == 1
    truncated = tmp_path / "truncated.gguf"
    truncated.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\x00" * 5)
    code, error = run_cli(capsys, "--gguf", str(truncated), "--out", str(out))
    assert code == 2 and error.startswith(f"webrl-torch: {truncated} --gguf: transformers cannot load it") and len(error.splitlines()) == 1
    assert not out.exists() and not (tmp_path / "out.partial").exists()


def test_a_directory_materialize_did_not_write_is_left_alone(capsys, tiny_gguf, tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    code, error = run_cli(capsys, "--gguf", str(tiny_gguf), "--out", str(out))
    assert code == 2 and f"{out} --out: exists and is not a checkpoint webrl-torch materialize wrote" in error
    assert [p.name for p in out.iterdir()] == ["notes.txt"]
