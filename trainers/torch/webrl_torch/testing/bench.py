"""`python -m webrl_torch.testing.bench`: seconds of actor-webrl training per 1,000 tokens, tiny Llama, CPU.

Prints `BENCH llm.train_seconds_per_1k_tokens <s> s` (bench/llm.ts reads it). The figure covers the
training steps only (forward + backward + optimizer on prompt + response tokens), not model loading.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import torch

from ..modeling import ModelOptions
from ..train import JobSpec, _Objective, run
from .tiny import build_tiny_model

ROWS = 16
STEPS = 8


def _records() -> list[dict]:
    rows = []
    for i in range(ROWS):
        prompt = f"Task Instruction: buy item {i}\n\nRound 0\n\n<html> " + " ".join(f'<button id="{j}"> Item {j} </button>' for j in range(20)) + " </html>\n"
        rows.append(
            {
                "schemaVersion": 1,
                "kind": "step",
                "id": f"t{i}:0",
                "campaignId": "bench",
                "phase": 1,
                "taskId": f"task{i}",
                "traceId": f"t{i}",
                "step": 0,
                "source": "rollout",
                "prompt": prompt,
                "response": f'do(action="Click", element="{i}")',
                "nextPrompt": None,
                "reward": float(i % 2),
                "done": True,
                "mcReturn": float(i % 2),
                "refLogprob": None,
                "responseTokens": None,
                "rank": None,
                "state": {"intent": f"buy item {i}"},
            }
        )
    return rows


def main() -> None:
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        model = build_tiny_model(root / "tiny")
        data = root / "data.jsonl"
        data.write_text("".join(json.dumps(r) + "\n" for r in _records()))
        options = ModelOptions(base_model=str(model), lora_rank=8, lora_alpha=16)
        critic_spec = JobSpec(objective="critic", data=str(data), out=str(root / "critic"), model=options, epochs=1, batch_size=ROWS)
        run(critic_spec)
        spec = JobSpec(
            objective="actor-webrl", data=str(data), out=str(root / "actor"), model=options, critic=critic_spec.out, batch_size=4, learning_rate=1e-4
        )
        objective = _Objective(spec)
        optimizer = torch.optim.AdamW([p for p in objective.module.parameters() if p.requires_grad], lr=spec.learning_rate)
        batches = [list(range(i, i + spec.batch_size)) for i in range(0, ROWS, spec.batch_size)]
        tokens = sum(int(objective._encode([r["id"]], [r["prompt"]], [r["response"]]).attention_mask.sum()) for r in _records())
        objective.module.train()
        started = time.perf_counter()
        for step in range(STEPS):
            loss, _ = objective.loss(batches[step % len(batches)])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        seconds = time.perf_counter() - started
        processed = tokens * STEPS / len(batches)
        print(f"BENCH llm.train_seconds_per_1k_tokens {seconds / processed * 1000:.4f} s", flush=True)


if __name__ == "__main__":
    main()
