"""The objectives against hand computations (plain floats, written out row by row)."""

import math

import torch

from webrl_torch.losses import WebRLConstants, critic_loss, sft_loss, trajectory_weights, webrl_actor_loss, webrl_advantage

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
    # Each row's log-ratio is normalised by its own response tokens (WebRL at batch size 1).
    log_prob = [-0.1, -2.5, ref[2] - 0.4 * 4, -0.3, -0.2]
    expected_rows = []
    # A: ref prob 0.9 >= 0.8 with advantage >= 0 -> beta 5; |1 / ratio| is about 19, no cap
    ratio = (log_prob[0] - ref[0]) / 2
    expected_rows.append(smooth_l1(5 * ratio, 1.0) / 5)
    # B: ref prob 0.5 < 0.8 -> beta 1
    ratio = (log_prob[1] - ref[1]) / 3
    expected_rows.append(smooth_l1(1 * ratio, 1.0) / 1)
    # C: beta 5 capped at |1 / -0.4| = 2.5: SmoothL1(-1, 1) = 1.5, divided by 2.5
    expected_rows.append(smooth_l1(2.5 * -0.4, 1.0) / 2.5)
    # D, E: negative advantage, masked out (beta would be 5 and 1) but still counted in the mean
    expected_rows += [0.0, 0.0]
    expected = sum(expected_rows) / 5
    assert abs(expected_rows[2] - 0.6) < 1e-12

    loss, metrics = webrl_actor_loss(T(*log_prob), T(*ref), T(*tokens), T(*advantage))
    assert abs(loss.item() - expected) < 1e-6
    # the betas as the trainer used them: 5, 1, capped 2.5; then D's 5 (ref prob 0.5 < 0.9) capped at
    # |-0.6 / ratio|, its ratio over 1 token (no positive row at batch size 1), and E's 1 (ref prob 0.95)
    capped = 0.6 / abs(log_prob[3] - ref[3])
    assert abs(metrics["beta_mean"] - (5 + 1 + 2.5 + capped + 1) / 5) < 1e-6


def test_a_rows_gradient_is_webrls_at_batch_size_one_whatever_the_batch():
    # 16 positive rows of 16 response tokens each. WebRL runs at batch size 1, so a row's log-ratio is
    # (-1 - (-4)) / 16 = 0.1875 and beta 1 (ref prob exp(-4/16) = 0.78 < 0.8):
    # d loss / d log_prob = SmoothL1'(0.1875 - 1) / 16 = -0.8125 / 16 = -0.0508. Normalising by the
    # batch's 256 positive tokens instead gave 16 times less. Averaged over 16 rows, as WebRL's gradient
    # accumulation averages its steps, the batch's gradient is the mean of the rows'.
    rows = 16
    alone = T(-1.0).requires_grad_()
    webrl_actor_loss(alone, T(-4.0), T(16.0), T(1.0))[0].backward()
    assert abs(alone.grad.item() - (-0.8125 / 16)) < 1e-12
    batch = T(*[-1.0] * rows).requires_grad_()
    webrl_actor_loss(batch, T(*[-4.0] * rows), T(*[16.0] * rows), T(*[1.0] * rows))[0].backward()
    assert all(abs(g * rows - alone.grad.item()) < 1e-12 for g in batch.grad.tolist())


def test_the_constants_are_the_jobs_not_fixed():
    constants = WebRLConstants(beta_low=2.0, beta_high=3.0, positive_advantage=0.5, negative_advantage=-0.2)
    advantage = webrl_advantage(T(0.5), T(0.5), T(0.9), T(0.9), T(0.0), T(0.0), T(1.0), constants)
    assert advantage.tolist() == [0.5]
    assert webrl_advantage(T(0.9), T(0.9), T(0.1), T(0.1), T(0.0), T(0.0), T(1.0), constants).tolist() == [-0.2]
    # ref prob exp(-1) < 0.8 with a positive advantage: beta_low 2; ratio (-1 - -2) / 1 = 1, cap |0.5 / 1|
    loss, metrics = webrl_actor_loss(T(-1.0), T(-2.0), T(2.0), T(0.5), constants)
    ratio = (-1.0 - -2.0) / 2
    assert abs(metrics["beta_mean"] - 1.0) < 1e-12  # min(2, |0.5 / 0.5|)
    assert abs(loss.item() - smooth_l1(1.0 * ratio, 0.5) / 1.0) < 1e-12


def test_actor_loss_gradient_flows_only_through_log_prob_with_beta_held_constant():
    log_prob = T(-1.0, -2.0).requires_grad_()
    loss, _ = webrl_actor_loss(log_prob, T(-1.5, -1.0), T(2.0, 2.0), T(1.0, -0.6))
    loss.backward()
    # row 0: its 2 tokens, ratio 0.25, beta 1 (ref prob exp(-0.75) < 0.8), SmoothL1'(0.25 - 1) = -0.75;
    # d/dlog_prob = (1/beta) * beta * (-0.75) / count / rows = -0.75 / 2 / 2
    assert abs(log_prob.grad[0].item() - (-0.75 / 4)) < 1e-9
    assert log_prob.grad[1].item() == 0.0


def test_actor_loss_without_positive_rows_is_zero_and_normalises_by_one():
    loss, metrics = webrl_actor_loss(T(-3.0), T(-1.0), T(2.0), T(-0.6))
    assert loss.item() == 0.0
    assert abs(metrics["log_ratio_mean"] - (-2.0)) < 1e-12


def test_sft_loss_is_each_rows_mean_nll_over_its_response_tokens_averaged_over_rows():
    token_log_probs = T(0.0, -1.0, -2.0, 0.0, -4.0, 0.0, 0.0, -3.0, 0.0, 0.0).reshape(2, 5)
    mask = T(0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0).reshape(2, 5)
    assert abs(sft_loss(token_log_probs, mask).item() - (7.0 / 3 + 3.0) / 2) < 1e-12


def test_critic_loss_is_webrls_per_row_sum_of_four_terms_averaged_and_masks_missing_next_states():
    s1, s2 = [[0.2, -0.1], [1.0, 0.5]], [[0.0, 0.3], [-0.4, 0.4]]
    n1, n2 = [[0.7, 0.1], [9.0, -9.0]], [[-0.2, 0.2], [9.0, 9.0]]
    success = [1, 0]
    has_next = [1.0, 0.0]  # row 1 is a last step: its next-state logits must not count
    row0 = cross_entropy(s1[0], 1) + cross_entropy(s2[0], 1) + cross_entropy(n1[0], 1) + cross_entropy(n2[0], 1)
    row1 = cross_entropy(s1[1], 0) + cross_entropy(s2[1], 0)
    loss = critic_loss((T(*s1), T(*s2)), (T(*n1), T(*n2)), torch.tensor(success), T(*has_next))
    assert abs(loss.item() - (row0 + row1) / 2) < 1e-6


def test_critic_loss_scales_each_row_by_its_weight():
    s1, s2 = [[0.2, -0.1], [1.0, 0.5]], [[0.0, 0.3], [-0.4, 0.4]]
    n = [[0.0, 0.0], [0.0, 0.0]]
    row0 = cross_entropy(s1[0], 1) + cross_entropy(s2[0], 1)
    row1 = cross_entropy(s1[1], 0) + cross_entropy(s2[1], 0)
    loss = critic_loss((T(*s1), T(*s2)), (T(*n), T(*n)), torch.tensor([1, 0]), T(0.0, 0.0), T(1.5, 0.5))
    assert abs(loss.item() - (1.5 * row0 + 0.5 * row1) / 2) < 1e-6


def test_trajectory_weights_give_every_trajectory_the_same_total_and_average_one():
    # A failed 6-step episode, a 1-step success, a 3-step episode: three trajectories over 10 rows.
    rows = ["fail"] * 6 + ["win"] + ["mid"] * 3
    weights = trajectory_weights(rows).tolist()
    totals = {t: sum(w for w, r in zip(weights, rows, strict=True) if r == t) for t in set(rows)}
    assert all(abs(total - 10 / 3) < 1e-5 for total in totals.values())
    assert abs(sum(weights) / len(weights) - 1) < 1e-6
    assert trajectory_weights(["a", "b"]).tolist() == [1.0, 1.0]
