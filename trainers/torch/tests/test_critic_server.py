"""serve-critic speaks webrl.critic/1 (models/remote/httpCritic.ts) over real HTTP."""

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request

import pytest
from conftest import train_tiny_job

from webrl_torch.critic_server import CriticService
from webrl_torch.modeling import ModelOptions
from webrl_torch.prompt import build_prompt

STATES = [
    {"intent": "Buy a lamp", "history": [], "observation": {"url": "http://shop/", "title": "Shop", "html": '<html> <button id="3"> Go </button> </html>'}},
    {
        "intent": "Buy a lamp",
        "history": ['do(action="Click", element="3")'],
        "observation": {"url": "http://shop/2", "title": "Lamps", "html": "<html> </html>"},
    },
]


def test_the_prompt_is_the_one_browser_policies_prompt_ts_builds():
    # Expected text printed by browser/policies/prompt.ts's buildPrompt for the same arguments.
    expected = (
        "Task Instruction: Buy a lamp\n\nRound 0\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>\nBuy a lamp\n\n"
        '<|eot_id|><|start_header_id|>assistant<|end_header_id|>\ndo(action="Click", element="3")\n\nRound 1\n\n'
        "<|eot_id|><|start_header_id|>user<|end_header_id|>\n** Simplified html **\n\n<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n"
        'do(action="Type", argument="lamp", element="4")\n\nRound 2\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>\n'
        '<html> <button id="3"> Go </button> é </html>\n\n<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n'
    )
    history = ['do(action="Click", element="3")', 'do(action="Type", argument="lamp", element="4")']
    assert build_prompt("Buy a lamp", history, '<html> <button id="3"> Go </button> é </html>') == expected


@pytest.fixture(scope="module")
def critic_checkpoint(tiny_model, tmp_path_factory):
    return train_tiny_job(tiny_model, tmp_path_factory.mktemp("served-critic"), "critic", epochs=2, learning_rate=1e-3)


def post(url: str, body: object, key: str | None = None) -> tuple[int, dict]:
    headers = {"content-type": "application/json", **({"authorization": f"Bearer {key}"} if key else {})}
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def serve_critic_command(tiny_model, *args):
    """`webrl-torch serve-critic` on the tiny model, on a free port, in float32, with `args` added."""
    return [sys.executable, "-m", "webrl_torch.cli", "serve-critic", "--base-model", str(tiny_model), *args, "--port", "0", "--dtype", "float32"]


def test_serve_critic_answers_values_requests_with_both_heads(tiny_model, critic_checkpoint):
    environment = {**os.environ, "CRITIC_TEST_KEY": "s3cret-test-key"}
    command = serve_critic_command(tiny_model, "--critic", critic_checkpoint, "--api-key-env", "CRITIC_TEST_KEY")
    server = subprocess.Popen(command, env=environment, stderr=subprocess.PIPE, text=True)
    try:
        url = None
        for line in server.stderr:
            if line.startswith("serving the critic"):
                url = line.split(" on ")[1].split()[0]
                break
        assert url, "the server never said where it listens"
        status, reply = post(f"{url}/values", {"protocol": "webrl.critic/1", "states": STATES}, key="s3cret-test-key")
        assert status == 200
        assert len(reply["values"]) == 2 and all(len(pair) == 2 and all(0 <= v <= 1 for v in pair) for pair in reply["values"])
        # The same numbers as the checkpoint computes in process on the same prompts.
        service = CriticService(ModelOptions(base_model=str(tiny_model), gradient_checkpointing=False), critic_checkpoint, None, 8)
        direct = service.values([build_prompt(s["intent"], s["history"], s["observation"]["html"]) for s in STATES])
        assert sum(reply["values"], []) == pytest.approx(sum(direct, []), abs=1e-5)

        assert post(f"{url}/values", {"protocol": "webrl.critic/1", "states": STATES})[0] == 401
        status, reply = post(f"{url}/values", {"protocol": "other", "states": []}, key="s3cret-test-key")
        assert status == 400 and "protocol" in reply["error"]
        status, reply = post(f"{url}/values", {"protocol": "webrl.critic/1", "states": [{"intent": "x", "history": []}]}, key="s3cret-test-key")
        assert status == 400 and reply["error"].startswith("states.0.observation.html")
        # A state with its rendered prompt is scored as it is (any prompt format).
        chat = "<|im_start|>user\nBuy a lamp<|im_end|>\n<|im_start|>assistant\n"
        status, reply = post(f"{url}/values", {"protocol": "webrl.critic/1", "states": [{**STATES[0], "prompt": chat}]}, key="s3cret-test-key")
        assert status == 200 and reply["values"][0] == pytest.approx(service.values([chat])[0], abs=1e-5)
        status, reply = post(f"{url}/values", {"protocol": "webrl.critic/1", "states": [{**STATES[0], "prompt": 3}]}, key="s3cret-test-key")
        assert status == 400 and reply["error"].startswith("states.0.prompt")
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_requests_name_their_critic_under_checkpoints_and_the_server_swaps_to_it(tiny_model, critic_checkpoint, tmp_path):
    import shutil

    from safetensors.torch import load_file, save_file

    # Two critics under the root: the trained one, and a copy whose heads are scaled (other values).
    root = tmp_path / "critics"
    shutil.copytree(critic_checkpoint, root / "phase-0" / "critic")
    shutil.copytree(critic_checkpoint, root / "phase-1" / "critic")
    heads = root / "phase-1" / "critic" / "heads.safetensors"
    save_file({name: tensor * 3 for name, tensor in load_file(str(heads)).items()}, str(heads))
    (tmp_path / "outside").mkdir()
    command = serve_critic_command(tiny_model, "--checkpoints", str(root))
    server = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    try:
        url = None
        for line in server.stderr:
            if line.startswith("serving the critic"):
                url = line.rsplit(" on ", 1)[1].split()[0]
                break
        assert url, "the server never said where it listens"
        with urllib.request.urlopen(f"{url}/health", timeout=60) as response:
            assert json.loads(response.read()) == {"status": "ok", "critic": None}

        def values(name):
            return post(f"{url}/values", {"protocol": "webrl.critic/1", "critic": name, "states": STATES})

        options = ModelOptions(base_model=str(tiny_model), gradient_checkpointing=False)
        prompts = [build_prompt(s["intent"], s["history"], s["observation"]["html"]) for s in STATES]
        for name in ["phase-0/critic", "phase-1/critic", "phase-0/critic"]:
            status, reply = values(name)
            assert status == 200 and reply["critic"] == name, reply
            direct = CriticService(options, str(root / name), None, 8).values(prompts)
            assert sum(reply["values"], []) == pytest.approx(sum(direct, []), abs=1e-5)
        assert values("phase-0/critic")[1]["values"] != values("phase-1/critic")[1]["values"]
        with urllib.request.urlopen(f"{url}/health", timeout=60) as response:
            assert json.loads(response.read())["critic"] == "phase-1/critic"

        # A request naming no critic, one outside the root, a missing one, a directory that is no critic: 400, naming the field.
        status, reply = post(f"{url}/values", {"protocol": "webrl.critic/1", "states": STATES})
        assert status == 400 and reply["error"].startswith("critic: this server holds no default critic")
        for name, message in [("../outside", "is outside"), ("phase-9/critic", "no checkpoint directory"), ("phase-0", "heads.safetensors is missing")]:
            status, reply = values(name)
            assert status == 400 and reply["error"].startswith("critic: ") and message in reply["error"], reply
        # The critic held is still the last one loaded.
        assert values("phase-1/critic")[0] == 200
    finally:
        server.terminate()
        server.wait(timeout=30)
