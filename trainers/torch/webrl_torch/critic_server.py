"""`webrl-torch serve-critic`: a critic checkpoint behind the project's `http` critic protocol.

    POST /values  {"protocol": "webrl.critic/1", ["critic": "<name>",] "states": [{"intent", "history": [...], "observation": {"url", "title", "html"}}]}
    200 -> {"values": [[v1, v2], ...], "critic": "<name>"}   (each head's success probability; the critic that gave them)

A state becomes the actor's completion prompt (prompt.py), as in the training records. With
`--api-key-env NAME` the server wants `Authorization: Bearer <$NAME>`. GET /health answers 200 once the
server is ready, with the critic it holds.

With `--checkpoints ROOT` a request may name its critic: a checkpoint directory under ROOT, by its path
relative to ROOT. The server loads it in place of the one it holds (one at a time, under the same lock as
the values), so a campaign that trains a new critic every phase asks for each phase's by name, and two
requests never mix critics. `--critic DIR` is the critic of requests that name none.
"""

from __future__ import annotations

import hmac
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import torch

from .encoding import encode_pairs, model_context
from .errors import InputError
from .losses import success_probability
from .modeling import ModelOptions, load_critic, load_tokenizer
from .prompt import build_prompt

PROTOCOL = "webrl.critic/1"


class BadRequest(Exception):
    pass


def _critic_name(body: dict) -> str | None:
    name = body.get("critic")
    if name is not None and (not isinstance(name, str) or not name):
        raise BadRequest("critic: expected a checkpoint's path under the server's --checkpoints")
    return name


def _prompts(body: object) -> list[str]:
    if not isinstance(body, dict) or body.get("protocol") != PROTOCOL:
        raise BadRequest(f"protocol: expected {PROTOCOL!r}")
    states = body.get("states")
    if not isinstance(states, list):
        raise BadRequest("states: expected an array")
    prompts = []
    for i, state in enumerate(states):
        # A state may carry the prompt as the actor's prompt format rendered it (chat-template included):
        # scored as it is. Otherwise it is rendered here, in the webrl-llama3 format.
        if isinstance(state, dict) and "prompt" in state:
            if not isinstance(state["prompt"], str):
                raise BadRequest(f"states.{i}.prompt: expected a string")
            prompts.append(state["prompt"])
            continue
        observation = state.get("observation") if isinstance(state, dict) else None
        if not isinstance(state, dict) or not isinstance(state.get("intent"), str):
            raise BadRequest(f"states.{i}.intent: expected a string")
        history = state.get("history")
        if not isinstance(history, list) or not all(isinstance(h, str) for h in history):
            raise BadRequest(f"states.{i}.history: expected an array of strings")
        if not isinstance(observation, dict) or not isinstance(observation.get("html"), str):
            raise BadRequest(f"states.{i}.observation.html: expected a string")
        prompts.append(build_prompt(state["intent"], history, observation["html"]))
    return prompts


class CriticService:
    def __init__(self, options: ModelOptions, checkpoint: str | None, max_length: int | None, batch_size: int, checkpoints: str | None = None):
        if checkpoint is None and checkpoints is None:
            raise InputError("serve-critic: name a critic (--critic DIR) or where requests name theirs (--checkpoints ROOT)")
        self.checkpoints = Path(checkpoints).resolve() if checkpoints is not None else None
        self.default = checkpoint
        self.critic = load_critic(options, checkpoint, trainable=False) if checkpoint is not None else None
        # The directory of the critic held (None: none yet), and the name it was asked by.
        self.held: tuple[str, str] | None = (checkpoint, checkpoint) if checkpoint is not None else None
        self.tokenizer = load_tokenizer(options.base_model)
        self.options, self.batch_size = options, batch_size
        self.max_length = max_length or model_context(options.base_model)
        self.cut_prompts = 0
        self.lock = threading.Lock()

    @property
    def loaded(self) -> str | None:
        """The name of the critic held: --critic's path, or a name under --checkpoints."""
        return self.held[1] if self.held else None

    def _directory(self, name: str | None) -> tuple[str, str]:
        """The checkpoint directory a request's `critic` names (--critic's when it names none), and its name."""
        if name is None:
            if self.default is None:
                raise BadRequest("critic: this server holds no default critic (started without --critic): name one under --checkpoints")
            return self.default, self.default
        if self.checkpoints is None:
            raise BadRequest("critic: this server loads no critic by name (started without --checkpoints)")
        path = (self.checkpoints / name).resolve()
        if not path.is_relative_to(self.checkpoints):
            raise BadRequest(f"critic: {name!r} is outside the server's --checkpoints")
        if not path.is_dir():
            raise BadRequest(f"critic: no checkpoint directory {name!r} under the server's --checkpoints")
        return str(path), name

    def _hold(self, name: str | None) -> str:
        """Holds the critic a request names, loaded in place of the one held; under the lock. Its name."""
        directory, label = self._directory(name)
        if self.held is None or self.held[0] != directory:
            started = time.monotonic()
            try:
                critic = load_critic(self.options, directory, trainable=False)
            except InputError as error:
                raise BadRequest(f"critic: {error}") from None
            self.critic, self.held = critic, (directory, label)
            print(f"loaded the critic {label} in {time.monotonic() - started:.1f} s", file=sys.stderr, flush=True)
        return label

    @torch.no_grad()
    def values(self, prompts: list[str], critic: str | None = None) -> list[list[float]]:
        return self.valued_by(prompts, critic)[0]

    @torch.no_grad()
    def valued_by(self, prompts: list[str], critic: str | None) -> tuple[list[list[float]], str]:
        """The values of each prompt under the critic named (see _directory), and that critic's name."""
        out: list[list[float]] = []
        with self.lock:
            label = self._hold(critic)
            for start in range(0, len(prompts), self.batch_size):
                chunk = prompts[start : start + self.batch_size]
                batch = encode_pairs(self.tokenizer, chunk, [""] * len(chunk), self.max_length, self.options.device)
                cut = [tokens for tokens in batch.cut_tokens if tokens]
                if cut:
                    self.cut_prompts += len(cut)
                    print(
                        f"prompt cut: {len(cut)} states lost {sum(cut)} tokens from their middles (max length {self.max_length}; {self.cut_prompts} so far)",
                        file=sys.stderr,
                        flush=True,
                    )
                v1, v2 = (success_probability(h) for h in self.critic(batch.input_ids, batch.attention_mask))
                out.extend([a, b] for a, b in zip(v1.tolist(), v2.tolist(), strict=True))
        return out, label


def make_server(service: CriticService, host: str, port: int, api_key: str | None) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def _reply(self, status: int, payload: object) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            if self.path != "/health":
                return self._reply(404, {"error": f"no route {self.path}"})
            self._reply(200, {"status": "ok", "critic": service.loaded})

        def do_POST(self) -> None:  # noqa: N802
            if self.path.rstrip("/") != "/values":
                return self._reply(404, {"error": f"no route {self.path}"})
            if api_key is not None and not hmac.compare_digest(self.headers.get("authorization", ""), f"Bearer {api_key}"):
                return self._reply(401, {"error": "missing or wrong bearer key"})
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))) or b"null")
                prompts = _prompts(body)
                values, critic = service.valued_by(prompts, _critic_name(body))
            except (json.JSONDecodeError, BadRequest) as error:
                return self._reply(400, {"error": str(error)})
            self._reply(200, {"values": values, "critic": critic})

        def log_message(self, format: str, *args: object) -> None:  # keep request lines off stdout
            pass

    return ThreadingHTTPServer((host, port), Handler)


def serve(
    options: ModelOptions,
    checkpoint: str | None,
    host: str,
    port: int,
    max_length: int | None,
    batch_size: int,
    api_key_env: str | None,
    checkpoints: str | None = None,
) -> None:
    api_key = os.environ.get(api_key_env) if api_key_env else None
    if api_key_env and not api_key:
        raise InputError(f"{api_key_env}: the --api-key-env variable is empty")
    server = make_server(CriticService(options, checkpoint, max_length, batch_size, checkpoints), host, port, api_key)
    serves = " and ".join(([checkpoint] if checkpoint else []) + ([f"the critics requests name under {checkpoints}"] if checkpoints else []))
    print(f"serving the critic {serves} on http://{host}:{server.server_address[1]} ({PROTOCOL})", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
