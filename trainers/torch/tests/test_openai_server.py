"""The tiny OpenAI-compatible server: generation, echo log-probs, and LoRA load/unload as vLLM speaks them."""
import json
import subprocess
import sys
import urllib.error
import urllib.request

import pytest


from conftest import train_tiny_job

PROMPT = 'Task: find the cheapest product number 2. Round 0 do(action="Click", element="3")'


def call(url: str, body: object | None = None) -> tuple[int, object]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"content-type": "application/json"}, method="GET" if body is None else "POST")
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            text = response.read().decode()
            return response.status, json.loads(text) if response.headers.get("content-type") == "application/json" else text
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.fixture(scope="module")
def adapter(tiny_model, tmp_path_factory):
    return train_tiny_job(tiny_model, tmp_path_factory.mktemp("served-adapter"), "actor-sft", epochs=3, learning_rate=1e-2)


@pytest.fixture(scope="module")
def server(tiny_model):
    process = subprocess.Popen([sys.executable, "-m", "webrl_torch.testing.openai_server", "--model", str(tiny_model), "--port", "0"], stderr=subprocess.PIPE, text=True)
    try:
        url = None
        for line in process.stderr:
            if line.startswith("serving tiny on "):
                url = line.split(" on ")[1].strip()
                break
        assert url, "the server never said where it listens"
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def echo_logprobs(url: str, model: str) -> list[float]:
    status, reply = call(f"{url}/completions", {"model": model, "prompt": PROMPT, "echo": True, "logprobs": 1, "max_tokens": 0, "temperature": 0})
    assert status == 200, reply
    logprobs = reply["choices"][0]["logprobs"]
    assert "".join(logprobs["tokens"]) == PROMPT
    assert logprobs["text_offset"][1] == len(logprobs["tokens"][0])
    assert logprobs["token_logprobs"][0] is None
    return logprobs["token_logprobs"][1:]


def test_generation_and_the_model_list(server):
    status, reply = call(f"{server}/completions", {"model": "tiny", "prompt": "Task:", "max_tokens": 4, "temperature": 0})
    assert status == 200 and reply["object"] == "text_completion"
    assert reply["choices"][0]["finish_reason"] in ("length", "stop") and reply["usage"]["completion_tokens"] <= 4
    status, listing = call(f"{server}/models")
    assert status == 200 and [m["id"] for m in listing["data"]] == ["tiny"]


def test_a_loaded_adapter_changes_the_prompt_logprobs_under_its_name_and_unloads(server, adapter):
    base = echo_logprobs(server, "tiny")
    status, text = call(f"{server}/load_lora_adapter", {"lora_name": "actor-phase-1", "lora_path": adapter})
    assert status == 200 and "added successfully" in text
    assert call(f"{server}/load_lora_adapter", {"lora_name": "actor-phase-1", "lora_path": adapter})[0] == 400
    assert [m["id"] for m in call(f"{server}/models")[1]["data"]] == ["tiny", "actor-phase-1"]
    tuned = echo_logprobs(server, "actor-phase-1")
    assert max(abs(a - b) for a, b in zip(base, tuned)) > 1e-3
    assert echo_logprobs(server, "tiny") == pytest.approx(base, abs=1e-6)  # the base model is untouched
    status, text = call(f"{server}/unload_lora_adapter", {"lora_name": "actor-phase-1"})
    assert status == 200 and "removed successfully" in text
    status, error = call(f"{server}/completions", {"model": "actor-phase-1", "prompt": PROMPT, "max_tokens": 1})
    assert status == 404 and error["type"] == "NotFoundError"
