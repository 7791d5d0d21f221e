"""The objectives as pure tensor functions, so each can be checked against a hand computation.

actor-webrl follows WebRL's trainer (THUDM/WebRL, webrl/algorithms/webrl/trainer.py, `actor_loss`), which
runs at batch size 1 (scripts/config/main/webrl.yaml) and averages over its gradient-accumulation steps
and processes: every loss here is that per-row loss, averaged over the rows of the batch, so a row's
gradient does not depend on the batch size. docs/torch-trainer.md lists every detail.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import torch
import torch.nn.functional as F

ADVANTAGE_OFFSET = 0.05


@dataclass(frozen=True)
class WebRLConstants:
    """The actor objective's constants (WEBRL_TRAIN_BETA_LOW/HIGH, *_ADVANTAGE); WebRL's values by default."""

    beta_low: float = 1.0
    beta_high: float = 5.0
    positive_advantage: float = 1.0
    negative_advantage: float = -0.6


WEBRL = WebRLConstants()


def webrl_advantage(
    v1: torch.Tensor,
    v2: torch.Tensor,
    nv1: torch.Tensor,
    nv2: torch.Tensor,
    reward: torch.Tensor,
    mc_return: torch.Tensor,
    has_next: torch.Tensor,
    constants: WebRLConstants = WEBRL,
) -> torch.Tensor:
    """Binarised advantage from the critic's success probabilities on the state and the next state.

    The last step has no next state; its next value is 0 (has_next = 0), as in the project's own trainer.
    """
    value = torch.minimum(v1, v2)
    next_value = torch.minimum(nv1, nv2) * has_next
    advantage = (next_value - value - ADVANTAGE_OFFSET + reward + mc_return).clamp(-1.0, 1.0)
    return torch.where(advantage >= 0, torch.full_like(advantage, constants.positive_advantage), torch.full_like(advantage, constants.negative_advantage))


def webrl_actor_loss(
    log_prob: torch.Tensor,
    ref_log_prob: torch.Tensor,
    tokens: torch.Tensor,
    advantage: torch.Tensor,
    constants: WebRLConstants = WEBRL,
) -> tuple[torch.Tensor, dict[str, float]]:
    """WebRL's KL-constrained actor loss, per row, averaged over the rows.

    log_prob, ref_log_prob: per row, summed over the response tokens (end of turn included); tokens:
    response tokens per row; advantage: from `webrl_advantage`. At WebRL's batch size 1 the log-ratio's
    normaliser (the response tokens of the batch's positive-advantage rows, 1 when there are none) is the
    row's own response tokens; only positive-advantage rows have a loss, so that is the row's count here.
    beta is per row and carries no gradient; the mean runs over every row (masked rows count as zeros).
    """
    tokens = tokens.to(log_prob.dtype)
    ref_prob = torch.exp(ref_log_prob / tokens)
    high = ((advantage >= 0) & (ref_prob >= 0.8)) | ((advantage < 0) & (ref_prob < 0.9))
    beta = torch.where(high, torch.full_like(log_prob, constants.beta_high), torch.full_like(log_prob, constants.beta_low))
    mask = (advantage > 0).to(log_prob.dtype)
    log_ratio = (log_prob - ref_log_prob) / torch.where(mask > 0, tokens, torch.ones_like(tokens))
    beta = torch.minimum(beta, (advantage / log_ratio).abs()).detach()
    per_row = F.smooth_l1_loss(beta * log_ratio, advantage, reduction="none") / beta * mask
    loss = per_row.mean()
    metrics = {
        "loss": loss.item(),
        "advantage_mean": advantage.mean().item(),
        "positive_rows": mask.sum().item(),
        "beta_mean": beta.mean().item(),
        "log_ratio_mean": log_ratio.detach().mean().item(),
        "kl_per_token": ((log_prob - ref_log_prob).detach() / tokens).mean().item(),
    }
    return loss, metrics


def sft_loss(token_log_probs: torch.Tensor, response_mask: torch.Tensor) -> torch.Tensor:
    """Token-level NLL per row (sum over its response tokens / their number), averaged over the rows: WebRL's
    SFT at batch size 1 (LLaMA-Factory, and `actor_loss_sft`) with its accumulation's mean."""
    per_row = -(token_log_probs * response_mask).sum(dim=1) / response_mask.sum(dim=1).clamp(min=1)
    return per_row.mean()


def critic_loss(
    state_logits: tuple[torch.Tensor, torch.Tensor],
    next_logits: tuple[torch.Tensor, torch.Tensor],
    success: torch.Tensor,
    has_next: torch.Tensor,
    weight: torch.Tensor | None = None,
) -> torch.Tensor:
    """Per row, as WebRL at batch size 1: cross-entropy of both heads against success (mcReturn > 0) on the
    state plus on the next state (which learns the same label), the four terms summed; averaged over rows,
    each row scaled by its weight when given (trajectory_weights).

    A row without a next state (the last step) has no next-state terms rather than a made-up state.
    """
    label = success.long()
    per_row = F.cross_entropy(state_logits[0], label, reduction="none") + F.cross_entropy(state_logits[1], label, reduction="none")
    mask = has_next.to(per_row.dtype)
    for logits in next_logits:
        per_row = per_row + F.cross_entropy(logits, label, reduction="none") * mask
    if weight is not None:
        per_row = per_row * weight.to(per_row.dtype)
    return per_row.mean()


def trajectory_weights(trajectories: list[str]) -> torch.Tensor:
    """A weight per row such that every trajectory weighs the same in all and the mean weight is 1.

    Why (a deliberate difference from WebRL, docs/webrl-fidelity.md): a failed episode of a small actor
    runs to the step limit while a success ends at its first decisive step, so per-step rows count a
    failure five or six times over and teach the critic that every start state fails. The filter reads
    the critic at start states, one per trajectory, so each trajectory counts once.
    """
    if not trajectories:
        return torch.ones(0)
    sizes = Counter(trajectories)
    raw = torch.tensor([1.0 / sizes[t] for t in trajectories], dtype=torch.float64)
    return (raw * (len(trajectories) / raw.sum())).float()


def success_probability(logits: torch.Tensor) -> torch.Tensor:
    """A critic head's value: the softmax probability of class 1 (success)."""
    return torch.softmax(logits, dim=-1)[..., 1]
