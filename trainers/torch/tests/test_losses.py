"""The objectives against hand computations (plain floats, written out row by row)."""
import math

import torch

from webrl_torch.losses import critic_loss, orm_loss, sft_loss, webrl_actor_loss, webrl_advantage

T = lambda *values: torch.tensor(values, dtype=torch.float64)  # noqa: E731


def smooth_l1(x: float, y: float) -> float:
    d = abs(x - y)
    return 0.5 * d * d if d < 1 else d - 0.5


def cross_entropy(logits: list[float], label: int) -> float:
    return -(logits[label] - math.log(sum(math.exp(z) for z in logits)))


def test_advantage_uses_min_of_both_heads_next_state_reward_return_offset_clamp_and_binarises():
    advantage = webrl_advantage(
        v1=T(0.2, 0.7, 0.1),
        v2=T(0.3, 0.6, 0.4),
        nv1=T(0.5, 0.1, 0.9),
        nv2=T(0.4, 0.9, 0.9),
        reward=T(0.0, 0.0, 1.0),
        mc_return=T(0.0, 0.0, 1.0),
        has_next=T(1.0, 1.0, 0.0),
    )
    # row 0: 0.4 - 0.2 - 0.05 = 0.15 -> +1; row 1: 0.1 - 0.6 - 0.05 = -0.55 -> -0.6;
    # row 2 (last step, next value 0): 0 - 0.1 - 0.05 + 1 + 1 = 1.85, clamped to 1 -> +1
    assert advantage.tolist() == [1.0, -0.6, 1.0]


def test_actor_loss_matches_hand_computation_with_both_betas_the_cap_and_the_mask():
    tokens = [2, 3, 4, 1, 2]
    advantage = [1.0, 1.0, 1.0, -0.6, -0.6]
    ref = [2 * math.log(0.9), 3 * math.log(0.5), 4 * math.log(0.85), math.log(0.5), 2 * math.log(0.95)]
    count = 2 + 3 + 4  # response tokens of the positive-advantage rows
    log_prob = [-0.1, -2.5, ref[2] - 0.4 * count, -0.3, -0.2]
    expected_rows = []
    # A: ref prob 0.9 >= 0.8 with advantage >= 0 -> beta 5; |1 / ratio| is about 81, no cap
    ratio = (log_prob[0] - ref[0]) / count
    expected_rows.append(smooth_l1(5 * ratio, 1.0) / 5)
    # B: ref prob 0.5 < 0.8 -> beta 1
    ratio = (log_prob[1] - ref[1]) / count
    expected_rows.append(smooth_l1(1 * ratio, 1.0) / 1)
    # C: beta 5 capped at |1 / -0.4| = 2.5: SmoothL1(-1, 1) = 1.5, divided by 2.5
    expected_rows.append(smooth_l1(2.5 * -0.4, 1.0) / 2.5)
    # D, E: negative advantage, masked out (beta would be 5 and 1) but still counted in the mean
    expected_rows += [0.0, 0.0]
    expected = sum(expected_rows) / 5
    assert abs(expected_rows[2] - 0.6) < 1e-12

    loss, metrics = webrl_actor_loss(T(*log_prob), T(*ref), T(*tokens), T(*advantage))
    assert abs(loss.item() - expected) < 1e-6
    # the betas as the trainer used them: 5, 1, capped 2.5, then 5 (ref prob 0.5 < 0.9) and 1 (0.95)
    assert abs(metrics["beta_mean"] - (5 + 1 + 2.5 + 5 + 1) / 5) < 1e-6


def test_actor_loss_gradient_flows_only_through_log_prob_with_beta_held_constant():
    log_prob = T(-1.0, -2.0).requires_grad_()
    loss, _ = webrl_actor_loss(log_prob, T(-1.5, -1.0), T(2.0, 2.0), T(1.0, -0.6))
    loss.backward()
    # row 0: count 2, ratio 0.25, beta 1 (ref prob exp(-0.75) < 0.8), SmoothL1'(0.25 - 1) = -0.75;
    # d/dlog_prob = (1/beta) * beta * (-0.75) / count / rows = -0.75 / 2 / 2
    assert abs(log_prob.grad[0].item() - (-0.75 / 4)) < 1e-9
    assert log_prob.grad[1].item() == 0.0


def test_actor_loss_without_positive_rows_is_zero_and_normalises_by_one():
    loss, metrics = webrl_actor_loss(T(-3.0), T(-1.0), T(2.0), T(-0.6))
    assert loss.item() == 0.0
    assert abs(metrics["log_ratio_mean"] - (-2.0)) < 1e-12


def test_sft_loss_is_mean_nll_over_response_tokens():
    token_log_probs = T(0.0, -1.0, -2.0, 0.0, -4.0).reshape(1, 5)
    mask = T(0.0, 1.0, 1.0, 0.0, 1.0).reshape(1, 5)
    assert abs(sft_loss(token_log_probs, mask).item() - 7.0 / 3) < 1e-12


def test_critic_loss_sums_both_heads_on_state_and_next_state_and_masks_missing_next_states():
    s1, s2 = [[0.2, -0.1], [1.0, 0.5]], [[0.0, 0.3], [-0.4, 0.4]]
    n1, n2 = [[0.7, 0.1], [9.0, -9.0]], [[-0.2, 0.2], [9.0, 9.0]]
    success = [1, 0]
    has_next = [1.0, 0.0]  # row 1 is a last step: its next-state logits must not count
    expected = sum(cross_entropy(s[i], success[i]) for s in (s1, s2) for i in range(2)) / 2
    expected += cross_entropy(n1[0], 1) + cross_entropy(n2[0], 1)
    loss = critic_loss((T(*s1), T(*s2)), (T(*n1), T(*n2)), torch.tensor(success), T(*has_next))
    assert abs(loss.item() - expected) < 1e-6


def test_orm_loss_is_cross_entropy_over_yes_and_no():
    yes, no, success = [2.0, -1.0, 0.5], [0.0, 1.0, 0.5], [1, 0, 0]
    expected = sum(cross_entropy([no[i], yes[i]], success[i]) for i in range(3)) / 3
    assert abs(orm_loss(T(*yes), T(*no), torch.tensor(success)).item() - expected) < 1e-6
