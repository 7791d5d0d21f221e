"""A small OpenAI-compatible server that runs a (tiny) model with transformers on CPU, for tests that
need vLLM's behaviour where no vLLM can run.

    python -m webrl_torch.testing.openai_server --tiny /tmp/tiny --port 8000

Routes, shaped as vLLM speaks them: GET /v1/models; POST /v1/completions (generation, greedy at
temperature 0 or sampled from `seed`; `echo` + `logprobs` return the prompt's tokens with
`tokens` / `token_logprobs` / `text_offset`, the first token's log-prob null); POST /v1/load_lora_adapter
{lora_name, lora_path} and /v1/unload_lora_adapter {lora_name}. An adapter is served under its name.
The prompt is scored after a BOS token, as the trainer scores it; BOS itself is not echoed, so the
echoed tokens spell the prompt exactly. A prompt longer than the model's context (`--context`, default
max_position_embeddings) loses its start, as the trainer's `--max-length` cuts it: generation continues
its last tokens, and the echoed tokens before the window have null log-probs (vLLM would refuse it). With `--log FILE` every POST is appended to FILE as a JSON line
(route, status, the model a completion asked for, an adapter's name and path, and on a load the sha256
of each of its files as read), so a test can say which model acted and what was loaded.
"""
from __future__ import annotations

import argparse
import copy
import hashlib
import json
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import torch
from peft import PeftModel
from transformers import AutoModelForCausalLM, AutoTokenizer

from .tiny import build_tiny_model


class ApiError(Exception):
    def __init__(self, status: int, kind: str, message: str):
        super().__init__(message)
        self.status, self.kind = status, kind


class Models:
    """The base model under its served name, and each loaded adapter (on its own copy of the base)."""

    def __init__(self, path: str, name: str, context: int | None = None):
        self.path, self.name = path, name
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.base = AutoModelForCausalLM.from_pretrained(path).eval()
        self.context = context or self.base.config.max_position_embeddings
        self.adapters: dict[str, torch.nn.Module] = {}
        self.lock = threading.Lock()

    def get(self, name: str) -> torch.nn.Module:
        if name == self.name:
            return self.base
        if name in self.adapters:
            return self.adapters[name]
        raise ApiError(404, "NotFoundError", f"The model `{name}` does not exist.")

    def load(self, name: str, path: str) -> dict[str, str]:
        if name == self.name or name in self.adapters:
            raise ApiError(400, "BadRequestError", f"The lora adapter '{name}' has already been loaded.")
        if not (Path(path) / "adapter_config.json").is_file():
            raise ApiError(400, "BadRequestError", f"Loading lora {name} failed: no adapter_config.json in {path}")
        files = {str(f.relative_to(path)): hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted(Path(path).rglob("*")) if f.is_file()}
        self.adapters[name] = PeftModel.from_pretrained(copy.deepcopy(self.base), path).eval()
        return files

    def unload(self, name: str) -> None:
        if self.adapters.pop(name, None) is None:
            raise ApiError(404, "NotFoundError", f"The lora adapter '{name}' cannot be found.")

    @torch.no_grad()
    def complete(self, body: dict) -> dict:
        name = body.get("model", self.name)
        prompt = body.get("prompt")
        if isinstance(prompt, list) and len(prompt) == 1:
            prompt = prompt[0]
        if not isinstance(prompt, str):
            raise ApiError(400, "BadRequestError", "prompt: expected a string")
        max_tokens = int(body.get("max_tokens", 16) or 0)
        temperature = float(body.get("temperature", 1.0))
        logprobs = body.get("logprobs")
        stops = body.get("stop") or []
        stops = [stops] if isinstance(stops, str) else list(stops)
        model = self.get(name)
        ids = self.tokenizer(prompt, add_special_tokens=False)["input_ids"]
        sequence = [self.tokenizer.bos_token_id, *ids]
        generator = torch.Generator().manual_seed(int(body.get("seed", 0) or 0))
        token_logprobs: list[float | None] = [None] * len(ids)
        if body.get("echo") and ids:
            # Scored on the last `context` tokens; ids[start:] get log-probs, the cut-off ones none.
            start = max(0, len(sequence) - self.context)
            kept = sequence[start:]
            logits = model(input_ids=torch.tensor([kept])).logits[0, :-1].float()
            picked = torch.log_softmax(logits, dim=-1).gather(-1, torch.tensor(kept[1:])[:, None]).squeeze(-1)
            token_logprobs = [None] * start + picked.tolist()
            token_logprobs[0] = None  # OpenAI's convention: the first token has none
        sequence = sequence[-max(1, self.context - max_tokens) :]  # generation continues the prompt's end
        generated: list[int] = []
        generated_logprobs: list[float] = []
        finish = "length"
        text = ""
        past = None
        for _ in range(max_tokens):
            step = model(input_ids=torch.tensor([generated[-1:] if past is not None else sequence]), past_key_values=past, use_cache=True)
            past, logits = step.past_key_values, step.logits[0, -1].float()
            log_probs = torch.log_softmax(logits, dim=-1)
            if temperature <= 0:
                token = int(log_probs.argmax())
            else:
                token = int(torch.multinomial(torch.softmax(logits / temperature, dim=-1), 1, generator=generator))
            if token == self.tokenizer.eos_token_id:
                finish = "stop"
                break
            generated.append(token)
            generated_logprobs.append(log_probs[token].item())
            text = self.tokenizer.decode(generated)
            hit = min((text.index(s) for s in stops if s in text), default=None)
            if hit is not None:
                text, finish = text[:hit], "stop"
                break
        tokens = self.tokenizer.batch_decode([[t] for t in (ids if body.get("echo") else []) + generated])
        offsets, position = [], 0
        for token in tokens:
            offsets.append(position)
            position += len(token)
        choice = {
            "index": 0,
            "text": (prompt if body.get("echo") else "") + text,
            "logprobs": None
            if logprobs is None
            else {"tokens": tokens, "token_logprobs": (token_logprobs if body.get("echo") else []) + generated_logprobs, "text_offset": offsets, "top_logprobs": None},
            "finish_reason": finish,
        }
        usage = {"prompt_tokens": len(ids), "completion_tokens": len(generated), "total_tokens": len(ids) + len(generated)}
        return {"id": f"cmpl-{uuid.uuid4().hex}", "object": "text_completion", "created": int(time.time()), "model": name, "choices": [choice], "usage": usage}

    def listing(self) -> dict:
        created = int(time.time())
        data = [{"id": self.name, "object": "model", "created": created, "owned_by": "webrl-torch", "root": self.path, "parent": None}]
        data += [{"id": n, "object": "model", "created": created, "owned_by": "webrl-torch", "root": n, "parent": self.name} for n in self.adapters]
        return {"object": "list", "data": data}


def make_server(models: Models, host: str, port: int, log: str | None = None) -> ThreadingHTTPServer:
    def record(entry: dict) -> None:
        if log:
            with open(log, "a", encoding="utf-8") as file:
                file.write(json.dumps(entry) + "\n")

    class Handler(BaseHTTPRequestHandler):
        def _send(self, status: int, payload: object, content_type: str = "application/json") -> None:
            data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802
            if self.path == "/v1/models":
                return self._send(200, models.listing())
            if self.path == "/health":
                return self._send(200, "", "text/plain")
            self._send(404, {"object": "error", "message": f"no route {self.path}", "type": "NotFoundError", "code": 404})

        def do_POST(self) -> None:  # noqa: N802
            entry: dict = {"path": self.path}
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))) or b"{}")
                entry.update({k: body[k] for k in ("model", "lora_name", "lora_path", "echo") if k in body})
                with models.lock:
                    if self.path == "/v1/completions":
                        entry["status"] = 200
                        return self._send(200, models.complete(body))
                    if self.path == "/v1/load_lora_adapter":
                        entry["files"] = models.load(str(body.get("lora_name")), str(body.get("lora_path")))
                        entry["status"] = 200
                        return self._send(200, f"Success: LoRA adapter '{body.get('lora_name')}' added successfully.", "text/plain")
                    if self.path == "/v1/unload_lora_adapter":
                        models.unload(str(body.get("lora_name")))
                        entry["status"] = 200
                        return self._send(200, f"Success: LoRA adapter '{body.get('lora_name')}' removed successfully.", "text/plain")
                raise ApiError(404, "NotFoundError", f"no route {self.path}")
            except json.JSONDecodeError as error:
                entry["status"] = 400
                self._send(400, {"object": "error", "message": f"the body is not JSON: {error.msg}", "type": "BadRequestError", "code": 400})
            except ApiError as error:
                entry["status"] = error.status
                self._send(error.status, {"object": "error", "message": str(error), "type": error.kind, "code": error.status})
            finally:
                record(entry)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return ThreadingHTTPServer((host, port), Handler)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m webrl_torch.testing.openai_server")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", help="a Hugging Face model directory")
    source.add_argument("--tiny", help="build the tiny random Llama into this directory (if absent) and serve it")
    parser.add_argument("--served-model-name", default="tiny")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="0 picks a free port (printed on stderr)")
    parser.add_argument("--log", help="append every POST to this file as a JSON line")
    parser.add_argument("--context", type=int, help="tokens a prompt is cut to, from its end (default: the model's max_position_embeddings)")
    args = parser.parse_args(argv)
    path = args.model
    if args.tiny:
        path = args.tiny
        if not (Path(path) / "config.json").is_file():
            build_tiny_model(path)
    server = make_server(Models(path, args.served_model_name, args.context), args.host, args.port, args.log)
    print(f"serving {args.served_model_name} on http://{args.host}:{server.server_address[1]}/v1", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
