"""The completion prompt of the released WebRL checkpoints (webrl.md §4), as browser/policies/prompt.ts
builds it, so a critic served from Python scores the same text the training records carry."""
from __future__ import annotations

PROMPT_CHAR_BUDGET = 16384 - 512
PAST_OBSERVATION = "** Simplified html **"
_USER_HEADER = "<|eot_id|><|start_header_id|>user<|end_header_id|>\n"
_ASSISTANT_HEADER = "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n"


def _round(index: int, observation: str) -> str:
    return f"Round {index}\n\n{_USER_HEADER}{observation}\n\n{_ASSISTANT_HEADER}"


def build_prompt(intent: str, past_responses: list[str], html: str) -> str:
    history = "".join(f"{_round(i, intent if i == 0 else PAST_OBSERVATION)}{response}\n\n" for i, response in enumerate(past_responses))
    room = max(0, PROMPT_CHAR_BUDGET - len(history))
    # JavaScript slices UTF-16 code units; the prompts are cut the same way to stay identical.
    units = html.encode("utf-16-le")
    observation = units[: 2 * room].decode("utf-16-le", errors="ignore") if len(units) > 2 * room else html
    return f"Task Instruction: {intent}\n\n{history}{_round(len(past_responses), observation)}"
