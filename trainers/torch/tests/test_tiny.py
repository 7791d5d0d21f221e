"""The tiny model is one vLLM serves: heads of 64, BOS before every encoding (after a reload too), a chat template."""

import json

from transformers import AutoConfig, AutoTokenizer

from webrl_torch.testing import tiny


def test_the_tiny_model_has_heads_of_64_and_its_tokenizer_puts_bos_first_after_a_reload(tiny_model, tmp_path):
    config = AutoConfig.from_pretrained(str(tiny_model))
    assert config.head_dim == 64 and config.hidden_size == config.num_attention_heads * 64
    tokenizer = AutoTokenizer.from_pretrained(str(tiny_model))
    assert tokenizer("abc").input_ids[0] == tokenizer.bos_token_id
    assert tokenizer("abc", add_special_tokens=False).input_ids[0] != tokenizer.bos_token_id
    assert json.loads((tiny_model / "tokenizer.json").read_text())["post_processor"]["type"] == "TemplateProcessing"
    tokenizer.save_pretrained(str(tmp_path / "again"))  # as the trainer saves it beside every adapter
    again = AutoTokenizer.from_pretrained(str(tmp_path / "again"))
    assert again("abc").input_ids == tokenizer("abc").input_ids
    chat = again.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True)
    assert chat == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    assert again.convert_tokens_to_ids("<|im_end|>") in json.loads((tiny_model / "generation_config.json").read_text())["eos_token_id"]


def test_the_command_line_builds_once_and_then_reuses(tmp_path, capsys):
    out = tmp_path / "tiny"
    assert tiny.main(["--out", str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"tiny: built {out}"
    written = (out / "model.safetensors").stat().st_mtime_ns
    assert tiny.main(["--out", str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"tiny: reusing {out}"
    assert (out / "model.safetensors").stat().st_mtime_ns == written
    assert tiny.main(["--out", str(out), "--layers", "1"]) == 0  # other settings: rebuilt in place
    assert capsys.readouterr().out.strip() == f"tiny: built {out}" and AutoConfig.from_pretrained(str(out)).num_hidden_layers == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny"]
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    assert tiny.main(["--out", str(foreign)]) == 2
    assert "was not written by this builder" in capsys.readouterr().err
