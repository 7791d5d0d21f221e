"""`webrl-torch serve-critic`: a critic checkpoint behind the project's `http` critic protocol.

    POST /values  {"protocol": "webrl.critic/1", "states": [{"intent", "history": [...], "observation": {"url", "title", "html"}}]}
    200 -> {"values": [[v1, v2], ...]}   (each head's success probability)

A state becomes the actor's completion prompt (prompt.py), as in the training records. With
`--api-key-env NAME` the server wants `Authorization: Bearer <$NAME>`. GET /health answers 200 once the
checkpoint is loaded.
"""
from __future__ import annotations

import hmac
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import torch

from .losses import success_probability
from .encoding import encode_pairs, model_context
from .modeling import ModelOptions, load_critic, load_tokenizer
from .prompt import build_prompt

PROTOCOL = "webrl.critic/1"


class BadRequest(Exception):
    pass


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
    def __init__(self, options: ModelOptions, checkpoint: str, max_length: int | None, batch_size: int):
        self.critic = load_critic(options, checkpoint, trainable=False)
        self.tokenizer = load_tokenizer(options.base_model)
        self.options, self.batch_size = options, batch_size
        self.max_length = max_length or model_context(options.base_model)
        self.cut_prompts = 0
        self.lock = threading.Lock()

    @torch.no_grad()
    def values(self, prompts: list[str]) -> list[list[float]]:
        out: list[list[float]] = []
        with self.lock:
            for start in range(0, len(prompts), self.batch_size):
                chunk = prompts[start : start + self.batch_size]
                batch = encode_pairs(self.tokenizer, chunk, [""] * len(chunk), self.max_length, self.options.device)
                cut = [tokens for tokens in batch.cut_tokens if tokens]
                if cut:
                    self.cut_prompts += len(cut)
                    print(f"prompt cut: {len(cut)} states lost {sum(cut)} tokens from their middles (max length {self.max_length}; {self.cut_prompts} so far)", file=sys.stderr, flush=True)
                v1, v2 = (success_probability(h) for h in self.critic(batch.input_ids, batch.attention_mask))
                out.extend([a, b] for a, b in zip(v1.tolist(), v2.tolist()))
        return out


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
            self._reply(200, {"status": "ok"}) if self.path == "/health" else self._reply(404, {"error": f"no route {self.path}"})

        def do_POST(self) -> None:  # noqa: N802
            if self.path.rstrip("/") != "/values":
                return self._reply(404, {"error": f"no route {self.path}"})
            if api_key is not None and not hmac.compare_digest(self.headers.get("authorization", ""), f"Bearer {api_key}"):
                return self._reply(401, {"error": "missing or wrong bearer key"})
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))) or b"null")
                prompts = _prompts(body)
            except (json.JSONDecodeError, BadRequest) as error:
                return self._reply(400, {"error": str(error)})
            self._reply(200, {"values": service.values(prompts)})

        def log_message(self, format: str, *args: object) -> None:  # keep request lines off stdout
            pass

    return ThreadingHTTPServer((host, port), Handler)


def serve(options: ModelOptions, checkpoint: str, host: str, port: int, max_length: int | None, batch_size: int, api_key_env: str | None) -> None:
    api_key = os.environ.get(api_key_env) if api_key_env else None
    if api_key_env and not api_key:
        from .errors import InputError

        raise InputError(f"{api_key_env}: the --api-key-env variable is empty")
    server = make_server(CriticService(options, checkpoint, max_length, batch_size), host, port, api_key)
    print(f"serving the critic {checkpoint} on http://{host}:{server.server_address[1]} ({PROTOCOL})", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
