"""A LoRA adapter for a base model with seeded random weights, shaped as `webrl-torch train` writes them.

    python -m webrl_torch.testing.adapter --base-model DIR --out DIR [--lora-rank 8] [--lora-alpha 16] [--seed 0]

bench:llm serves it to compare vLLM's LoRA paths. PEFT starts B at zero (the adapter would answer as
the base model); B drawn from N(0, 0.02) makes the adapter change the answers, so two paths that
compute it differently would answer differently.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

from ..modeling import ModelOptions, load_language_model, save_language_model


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-model", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--lora-rank", type=int, default=8)
    parser.add_argument("--lora-alpha", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    options = ModelOptions(base_model=args.base_model, lora_rank=args.lora_rank, lora_alpha=args.lora_alpha, gradient_checkpointing=False)
    model = load_language_model(options, None, trainable=True)
    generator = torch.Generator().manual_seed(args.seed)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "lora_B" in name:
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.02)
    save_language_model(model, Path(args.out))
    print(f"wrote a random rank-{args.lora_rank} adapter of {args.base_model} to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
