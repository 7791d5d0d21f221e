"""Phase 0's data as the campaign sends it (WEBRL_TRAIN_DATA_FORMAT=examples: the embedded trainer's rows
with structured states), and a phase's critic job, which gets the previous critic as {init}."""

from pathlib import Path

import pytest
from conftest import write_jsonl
from safetensors.torch import load_file

from webrl_torch.errors import InputError
from webrl_torch.modeling import ModelOptions
from webrl_torch.prompt import build_prompt, orm_messages
from webrl_torch.records import read_examples
from webrl_torch.train import JobSpec, run


def state(i: int, history: list) -> dict:
    return {
        "intent": f"Buy lamp {i}",
        "history": history,
        "observation": {"url": "http://shop/", "title": "", "html": f'<html> <button id="3"> Lamp {i} </button> </html>', "elements": []},
    }


CLICK = 'do(action="Click", element="3")'
DEMONSTRATIONS = [{"state": state(i, [{"response": CLICK, "action": {"kind": "click"}}] * (i % 2)), "response": CLICK} for i in range(4)]
CRITIC = [{"state": state(i, [CLICK] * (i % 2)), "mcReturn": 0.9 if i % 2 else 0.0} for i in range(4)]
ORM = [{"state": state(i, [{"response": CLICK}]), "success": i % 2 == 0} for i in range(4)]


def test_the_orm_messages_are_the_chat_orms_system_text_and_user_turn():
    # Expected: ORM_SYSTEM_PROMPT and ormUserTurn(state) as models/remote/chatOrm.ts sends them.
    system = (
        "You are an expert in evaluating the performance of a website navigation agent. The agent is designed to help a human user navigate the "
        "website to complete a task. Given the user\u2019s intent, the agent's action history, and the final state of the screen, your goal is to "
        "decide whether the agent\u2019s execution is successful or not. You must respond with YES or NO."
    )
    user = 'The User Intent:\nBuy a lamp\n\nAction History:\ndo(action="Click", element="3")\nThinking.; exit(message="done")\n\nThe Current Screenshot:\n<html> <p> é </p> </html>'
    messages = orm_messages("  Buy a lamp \n", [CLICK, 'Thinking.\nexit(message="done")'], "\n <html> <p> é </p> </html>  \n")
    assert messages == [{"role": "system", "content": system}, {"role": "user", "content": user}]


def test_example_rows_become_records_with_the_actors_prompt_and_bad_rows_name_line_and_field(tmp_path):
    render = lambda messages: "|".join(m["content"] for m in messages)  # noqa: E731
    demonstrations = read_examples(write_jsonl(tmp_path / "sft.jsonl", DEMONSTRATIONS), "actor-sft", render)
    assert demonstrations[1].prompt == build_prompt("Buy lamp 1", [CLICK], '<html> <button id="3"> Lamp 1 </button> </html>')
    assert demonstrations[1].response == CLICK and demonstrations[1].next_prompt is None
    critic = read_examples(write_jsonl(tmp_path / "critic.jsonl", CRITIC), "critic", render)
    assert [r.mc_return for r in critic] == [0.0, 0.9, 0.0, 0.9]
    orm = read_examples(write_jsonl(tmp_path / "orm.jsonl", ORM), "orm", render)
    assert [r.response for r in orm] == ["YES", "NO", "YES", "NO"] and orm[0].prompt.endswith("Lamp 0 </button> </html>")
    bad = write_jsonl(tmp_path / "bad.jsonl", [CRITIC[0], {"state": {"intent": "x"}, "mcReturn": 1}])
    with pytest.raises(InputError, match=r"bad\.jsonl:2 state: expected a state"):
        read_examples(bad, "critic", render)


def test_phase_zero_jobs_train_from_examples_and_a_critic_given_as_init_is_continued(tiny_model, tmp_path):
    model = ModelOptions(base_model=str(tiny_model), lora_rank=4, lora_alpha=8)
    common = dict(model=model, data_format="examples", epochs=2, batch_size=4, learning_rate=1e-2, max_length=256)
    for objective, rows in (("actor-sft", DEMONSTRATIONS), ("orm", ORM)):
        spec = JobSpec(objective=objective, data=str(write_jsonl(tmp_path / f"{objective}.jsonl", rows)), out=str(tmp_path / objective), **common)
        assert len(run(spec)) == 2
        assert (Path(spec.out) / "adapter_model.safetensors").is_file()
    critic_data = str(write_jsonl(tmp_path / "critic.jsonl", CRITIC))
    first = JobSpec(objective="critic", data=critic_data, out=str(tmp_path / "critic-0"), **common)
    run(first)
    # The phase's critic job: {init} is the previous critic, whose heads it goes on training (a learning
    # rate too small to move them leaves them as they were; fresh heads would differ).
    again = JobSpec(objective="critic", data=critic_data, out=str(tmp_path / "critic-1"), init=first.out, **{**common, "learning_rate": 1e-12, "seed": 99})
    run(again)
    before, after = load_file(str(Path(first.out) / "heads.safetensors")), load_file(str(Path(again.out) / "heads.safetensors"))
    assert max((before[k] - after[k]).abs().max().item() for k in before) < 1e-6
