"""The objectives as jobs compute them on a real (tiny) model, against WebRL's formulas computed here by hand
one row at a time (WebRL's batch size 1), at the project's batch size: the end-of-turn token is a target
and counted, and a prompt longer than the max length keeps its instruction."""

import math

import pytest
import torch
from conftest import step_record, write_jsonl

from webrl_torch.critic_server import CriticService
from webrl_torch.encoding import cut_middle, end_of_turn, prompt_ids
from webrl_torch.errors import InputError
from webrl_torch.losses import success_probability
from webrl_torch.modeling import ModelOptions, new_critic, save_critic, value_head
from webrl_torch.prompt import build_prompt, orm_messages
from webrl_torch.train import JobSpec, _Objective

BATCH = 16  # the campaign's default batch size (config/schema.ts campaign.training.batchSize)
CLICK = 'do(action="Click", element="3")'


def options(tiny_model) -> ModelOptions:
    return ModelOptions(base_model=str(tiny_model), lora_rank=4, lora_alpha=8, gradient_checkpointing=False)


def row_log_probs(model, ids: list[int], prompt_length: int) -> list[float]:
    """log p(token | tokens before) for each token after the prompt, the row alone (no padding)."""
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids])).logits[0].float()
    log_softmax = torch.log_softmax(logits, dim=-1)
    return [log_softmax[t - 1, ids[t]].item() for t in range(prompt_length, len(ids))]


def response_ids(objective, response: str) -> list[int]:
    return objective.tokenizer(response + objective.end_of_turn, add_special_tokens=False)["input_ids"]


def smooth_l1(x: float, y: float) -> float:
    d = abs(x - y)
    return 0.5 * d * d if d < 1 else d - 0.5


def webrl_row_loss(log_prob: float, ref: float, tokens: int, advantage: float) -> float:
    """WebRL's actor_loss for one row (batch size 1), beta 1 or 5."""
    ref_prob = math.exp(ref / tokens)
    beta = 5.0 if (advantage >= 0 and ref_prob >= 0.8) or (advantage < 0 and ref_prob < 0.9) else 1.0
    if advantage <= 0:
        return 0.0
    ratio = (log_prob - ref) / tokens
    beta = min(beta, abs(advantage / ratio))
    return smooth_l1(beta * ratio, advantage) / beta


@pytest.mark.parametrize("prompt_format, closing", [("webrl-llama3", "<|eot_id|>"), ("chat-template", "<|im_end|>")])
def test_actor_sft_targets_the_response_and_its_end_of_turn_as_webrl_per_row_mean(tiny_model, tmp_path, prompt_format, closing):
    # An empty reply trains the end of turn alone (WebRL appends it to every action).
    responses = [CLICK, 'exit(message="the lamp costs 12 dollars")', ""] * 6
    records = [step_record(i, success=True, response=responses[i]) for i in range(BATCH)]
    spec = JobSpec(
        objective="actor-sft",
        data=str(write_jsonl(tmp_path / "d.jsonl", records)),
        out=str(tmp_path / "o"),
        model=options(tiny_model),
        prompt_format=prompt_format,
    )
    objective = _Objective(spec)
    assert objective.end_of_turn == closing and objective.max_length == 4096  # the tiny model's context (max_position_embeddings)
    expected = []
    for record in records:
        prompt = prompt_ids(objective.tokenizer, record["prompt"])
        target = response_ids(objective, record["response"])
        assert objective.tokenizer.decode(target).endswith(closing)
        log_probs = row_log_probs(objective.module, prompt + target, len(prompt))
        assert len(log_probs) == len(target)  # every response token and the end of turn, nothing else
        expected.append(-sum(log_probs) / len(log_probs))
    loss, _ = objective.loss(list(range(BATCH)))
    assert abs(loss.item() - sum(expected) / BATCH) < 1e-4


def test_actor_webrl_equals_webrls_formula_row_by_row_at_batch_16_with_the_end_of_turn(tiny_model, tmp_path):
    model = options(tiny_model)
    critic_dir = tmp_path / "critic"
    torch.manual_seed(0)
    save_critic(new_critic(model, None, seed=3), critic_dir, str(tiny_model))
    records = []
    for i in range(BATCH):
        last = i % 3 == 0
        success = i % 2 == 0
        response = CLICK if success else "" if i == 1 else 'exit(message="no")'
        # A refLogprob (response + end of turn) the current actor is close to or far from, so both betas and the cap occur.
        records.append(
            step_record(
                i,
                success=success,
                last=last,
                response=response,
                ref_logprob=-2.0 - 6.0 * (i % 4),
                mcReturn=0.9 if success else 0.0,
                reward=1.0 if success and last else 0.0,
            )
        )
    spec = JobSpec(
        objective="actor-webrl",
        data=str(write_jsonl(tmp_path / "d.jsonl", records)),
        out=str(tmp_path / "o"),
        model=model,
        critic=str(critic_dir),
        batch_size=BATCH,
    )
    objective = _Objective(spec)
    critic = CriticService(model, str(critic_dir), None, 1)  # one state at a time, as WebRL
    expected = []
    for i, record in enumerate(records):
        ((v1, v2),) = critic.values([record["prompt"]])
        nv = min(critic.values([record["nextPrompt"]])[0]) if record["nextPrompt"] else 0.0
        raw = max(-1.0, min(1.0, nv - min(v1, v2) - 0.05 + record["reward"] + record["mcReturn"]))
        advantage = 1.0 if raw >= 0 else -0.6
        assert abs(objective.advantage[i].item() - advantage) < 1e-6
        prompt = prompt_ids(objective.tokenizer, record["prompt"])
        target = response_ids(objective, record["response"])
        assert objective.tokens[i].item() == len(target) > 0  # the end of turn is counted, an empty reply's too
        log_prob = sum(row_log_probs(objective.module, prompt + target, len(prompt)))
        expected.append(webrl_row_loss(log_prob, record["refLogprob"], len(target), advantage))
    assert sum(1 for e in expected if e > 0) >= 3
    loss, _ = objective.loss(list(range(BATCH)))
    assert abs(loss.item() - sum(expected) / BATCH) < 1e-4


def test_fresh_critic_heads_value_states_of_smollm2s_scale_near_one_half():
    # SmolLM2-135M-Instruct's last hidden state at a prompt's last token: RMS about 2.4, single features
    # near 50 (measured on the bench's prompts). WebRL's normal(0, 0.2) hidden layers gave these logits
    # of +-30, a success probability of 1e-29 for every state.
    torch.manual_seed(0)
    states = torch.randn(64, 576) * 2.0
    states[:, :3] = 48.0
    for seed in range(3):
        torch.manual_seed(seed)
        values = success_probability(value_head(576)(states))
        assert 0.2 < values.min().item() and values.max().item() < 0.8


def test_critic_is_webrls_four_cross_entropies_per_row_each_trajectory_weighing_the_same(tiny_model, tmp_path):
    # Rows 0-3 are one failed 4-step trajectory, rows 4-5 one of 2 steps; every other row is a trajectory alone.
    trajectory = ["long"] * 4 + ["pair"] * 2 + [f"alone-{i}" for i in range(6, BATCH)]
    records = [step_record(i, success=i >= 6 and i % 2 == 0, last=i % 4 == 3, traceId=trajectory[i]) for i in range(BATCH)]
    spec = JobSpec(
        objective="critic", data=str(write_jsonl(tmp_path / "d.jsonl", records)), out=str(tmp_path / "o"), model=options(tiny_model), batch_size=BATCH
    )
    objective = _Objective(spec)
    critic = objective.module

    def heads(prompt: str) -> list[torch.Tensor]:
        ids = prompt_ids(objective.tokenizer, prompt)
        with torch.no_grad():
            return list(critic(torch.tensor([ids]), torch.ones(1, len(ids), dtype=torch.long)))

    expected = []
    for record in records:
        label = torch.tensor([1 if record["mcReturn"] > 0 else 0])
        terms = heads(record["prompt"]) + (heads(record["nextPrompt"]) if record["nextPrompt"] else [])
        expected.append(sum(torch.nn.functional.cross_entropy(logits, label).item() for logits in terms))
    # 12 trajectories over 16 rows: a row weighs 16/12 divided by its trajectory's length.
    weight = [16 / 12 / trajectory.count(t) for t in trajectory]
    with torch.no_grad():
        loss, _ = objective.loss(list(range(BATCH)))
    assert abs(loss.item() - sum(w * e for w, e in zip(weight, expected, strict=True)) / BATCH) < 1e-4


def test_orm_is_chat_sft_on_yes_or_no_and_the_end_of_turn_under_the_models_chat_template(tiny_model, tmp_path):
    rows = [
        {"state": {"intent": f"Buy lamp {i}", "history": [CLICK], "observation": {"html": f"<html> lamp {i} </html>"}}, "success": i % 3 == 0}
        for i in range(BATCH)
    ]
    spec = JobSpec(
        objective="orm",
        data=str(write_jsonl(tmp_path / "d.jsonl", rows)),
        out=str(tmp_path / "o"),
        model=options(tiny_model),
        data_format="examples",
        batch_size=BATCH,
    )
    objective = _Objective(spec)
    assert objective.end_of_turn == end_of_turn(objective.tokenizer, "chat-template") == "<|im_end|>"
    expected = []
    for row, record in zip(rows, objective.records, strict=True):
        # The text the chat endpoint renders for chatOrm.ts's two messages, ending with the generation prompt.
        messages = orm_messages(row["state"]["intent"], [CLICK], row["state"]["observation"]["html"])
        assert record.prompt == objective.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        assert record.prompt.endswith("<|im_start|>assistant\n")
        # Tokenised as the chat endpoint does: the template's text alone (this template writes no BOS).
        prompt = objective.tokenizer(record.prompt, add_special_tokens=False)["input_ids"]
        assert prompt[0] != objective.tokenizer.bos_token_id
        target = response_ids(objective, "YES" if row["success"] else "NO")
        log_probs = row_log_probs(objective.module, prompt + target, len(prompt))
        expected.append(-sum(log_probs) / len(log_probs))
    loss, _ = objective.loss(list(range(BATCH)))
    assert abs(loss.item() - sum(expected) / BATCH) < 1e-4


def test_a_prompt_over_the_max_length_loses_its_middle_keeps_instruction_and_generation_prompt_and_is_counted(tiny_model, tmp_path, capfd):
    html = "<html> " + " ".join(f"<p> product {n} costs {n} dollars </p>" for n in range(300)) + " </html>"
    prompt = build_prompt("Find the cheapest lamp", [CLICK], html)
    records = [step_record(0, success=True, prompt=prompt, response=CLICK), step_record(1, success=True)]
    spec = JobSpec(
        objective="actor-sft", data=str(write_jsonl(tmp_path / "d.jsonl", records)), out=str(tmp_path / "o"), model=options(tiny_model), max_length=512
    )
    objective = _Objective(spec)
    full = prompt_ids(objective.tokenizer, prompt)
    target = response_ids(objective, CLICK)
    assert len(full) + len(target) > 512
    batch = objective._encode(["trace-0:0", "trace-1:0"], [prompt, records[1]["prompt"]], [CLICK, CLICK])
    kept = batch.input_ids[0, : int(batch.attention_mask[0].sum())].tolist()
    assert len(kept) == 512 and kept[-len(target) :] == target  # the response and its end of turn whole
    assert kept[0] == objective.tokenizer.bos_token_id
    text = objective.tokenizer.decode(kept[1 : -len(target)])
    assert text.startswith("Task Instruction: Find the cheapest lamp\n\nRound 0")
    assert text.endswith("</html>\n\n<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n")
    assert kept[: -len(target)] == cut_middle(full, 512 - len(target))
    assert batch.cut_tokens == [len(full) + len(target) - 512, 0]
    assert "prompt cut: trace-0:0 lost" in capfd.readouterr().err
    # The loss is WebRL's on what was kept.
    expected = [-sum(lp) / len(lp) for lp in (row_log_probs(objective.module, kept, 512 - len(target)),)]
    short = prompt_ids(objective.tokenizer, records[1]["prompt"])
    lp = row_log_probs(objective.module, short + target, len(short))
    expected.append(-sum(lp) / len(lp))
    loss, _ = objective.loss([0, 1])
    assert abs(loss.item() - sum(expected) / 2) < 1e-4
    # A response that leaves its prompt no room is refused with the row, never cut.
    with pytest.raises(InputError, match=r"trace-0:0: a response of \d+ tokens leaves no room"):
        objective._encode(["trace-0:0"], [prompt], [CLICK * 200])
