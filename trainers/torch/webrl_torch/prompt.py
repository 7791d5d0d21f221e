"""The completion prompt of the released WebRL checkpoints (webrl.md §4), as browser/policies/prompt.ts
builds it, so a critic served from Python scores the same text the training records carry; and the
ORM's conversation as models/remote/chatOrm.ts builds it, for the orm objective's `examples` rows."""

from __future__ import annotations

import json
import re
from importlib import resources

# The prompt text, one copy for both languages (browser/policies/promptTemplates.ts reads it too).
TEMPLATES = json.loads(resources.files(__package__).joinpath("prompt-templates.json").read_text(encoding="utf-8"))
PROMPT_CHAR_BUDGET: int = TEMPLATES["charBudget"]
PAST_OBSERVATION: str = TEMPLATES["actor"]["pastObservation"]
# WebRL's ORM system text, character for character (models/remote/chatOrm.ts ORM_SYSTEM_PROMPT).
ORM_SYSTEM_PROMPT: str = TEMPLATES["orm"]["system"]


def fill(template: str, **values: object) -> str:
    """Fills each {name} of the template in one pass, as promptTemplates.ts fillTemplate does: a value put in is not read again."""
    return re.sub(r"\{(\w+)\}", lambda match: str(values[match.group(1)]), template)


def _round(index: int, observation: str) -> str:
    return fill(TEMPLATES["actor"]["round"], index=index, observation=observation)


def build_prompt(intent: str, past_responses: list[str], html: str) -> str:
    history = "".join(
        fill(TEMPLATES["actor"]["pastRound"], round=_round(i, intent if i == 0 else PAST_OBSERVATION), response=response)
        for i, response in enumerate(past_responses)
    )
    room = max(0, PROMPT_CHAR_BUDGET - _js_length(history))
    observation = _js_slice(html, room)
    return fill(TEMPLATES["actor"]["prompt"], intent=intent, history=history, round=_round(len(past_responses), observation))


def _js_trim(text: str) -> str:
    return text.strip(" \t\n\r\v\f\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff")


# JavaScript strings count UTF-16 code units: a character outside the BMP (an emoji) is two of them, and a
# slice may end between the two, keeping a lone high surrogate. Python counts and cuts the same way here, so
# the prompts stay identical (surrogatepass round-trips lone surrogates, as JSON carries them).
def _js_length(text: str) -> int:
    """text.length in JavaScript."""
    return len(text.encode("utf-16-le", errors="surrogatepass")) // 2


def _js_slice(text: str, units: int) -> str:
    """text.slice(0, units) in JavaScript."""
    if _js_length(text) <= units:
        return text
    return text.encode("utf-16-le", errors="surrogatepass")[: 2 * units].decode("utf-16-le", errors="surrogatepass")


def orm_user_turn(intent: str, past_responses: list[str], html: str) -> str:
    """The chat ORM's user turn as models/remote/chatOrm.ts ormUserTurn builds it (WebRL's build_rm_data)."""
    actions = "".join(fill(TEMPLATES["orm"]["actionLine"], action="; ".join(response.split("\n")).strip()) for response in past_responses)
    page = _js_trim(_js_slice(html, PROMPT_CHAR_BUDGET))
    return fill(TEMPLATES["orm"]["user"], intent=_js_trim(intent), actions=actions, page=page)


def orm_messages(intent: str, past_responses: list[str], html: str) -> list[dict[str, str]]:
    """The chat ORM's conversation (models/remote/chatOrm.ts sends these two messages to the chat
    endpoint, which renders them with the model's chat template; the orm objective renders the same)."""
    return [{"role": "system", "content": ORM_SYSTEM_PROMPT}, {"role": "user", "content": orm_user_turn(intent, past_responses, html)}]
