"""The objectives as pure tensor functions, so each can be checked against a hand computation.

actor-webrl follows WebRL's trainer (THUDM/WebRL, webrl/algorithms/webrl/trainer.py, `actor_loss`);
docs/torch-trainer.md lists every detail and the few deliberate differences.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

ADVANTAGE_OFFSET = 0.05
POSITIVE_ADVANTAGE = 1.0
NEGATIVE_ADVANTAGE = -0.6
BETA_HIGH = 5.0
BETA_LOW = 1.0


def webrl_advantage(
    v1: torch.Tensor,
    v2: torch.Tensor,
    nv1: torch.Tensor,
    nv2: torch.Tensor,
    reward: torch.Tensor,
    mc_return: torch.Tensor,
    has_next: torch.Tensor,
) -> torch.Tensor:
    """Binarised advantage from the critic's success probabilities on the state and the next state.

    The last step has no next state; its next value is 0 (has_next = 0), as in the project's own trainer.
    """
    value = torch.minimum(v1, v2)
    next_value = torch.minimum(nv1, nv2) * has_next
    advantage = (next_value - value - ADVANTAGE_OFFSET + reward + mc_return).clamp(-1.0, 1.0)
    return torch.where(advantage >= 0, torch.full_like(advantage, POSITIVE_ADVANTAGE), torch.full_like(advantage, NEGATIVE_ADVANTAGE))


def webrl_actor_loss(
    log_prob: torch.Tensor,
    ref_log_prob: torch.Tensor,
    tokens: torch.Tensor,
    advantage: torch.Tensor,
) -> tuple[torch.Tensor, dict[str, float]]:
    """WebRL's KL-constrained actor loss.

    log_prob, ref_log_prob: per row, summed over the response (action) tokens; tokens: response tokens per
    row; advantage: from `webrl_advantage`. The log-ratio is normalised by the total response tokens of
    the positive-advantage rows of the batch (1 when there are none), beta is per row and carries no
    gradient, and the mean runs over every row (masked rows count as zeros).
    """
    tokens = tokens.to(log_prob.dtype)
    ref_prob = torch.exp(ref_log_prob / tokens)
    high = ((advantage >= 0) & (ref_prob >= 0.8)) | ((advantage < 0) & (ref_prob < 0.9))
    beta = torch.where(high, torch.full_like(log_prob, BETA_HIGH), torch.full_like(log_prob, BETA_LOW))
    mask = (advantage > 0).to(log_prob.dtype)
    positive_tokens = (tokens * mask).sum()
    count = torch.where(positive_tokens > 0, positive_tokens, torch.ones_like(positive_tokens))
    log_ratio = (log_prob - ref_log_prob) / count
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
    """Token-level NLL over the response tokens of the batch (sum / number of response tokens)."""
    return -(token_log_probs * response_mask).sum() / response_mask.sum().clamp(min=1)


def critic_loss(
    state_logits: tuple[torch.Tensor, torch.Tensor],
    next_logits: tuple[torch.Tensor, torch.Tensor],
    success: torch.Tensor,
    has_next: torch.Tensor,
) -> torch.Tensor:
    """Cross-entropy of both heads against success (mcReturn > 0) on the state, plus on the next state.

    As in WebRL the four terms are summed and the next state learns the same label; rows without a
    next state (the last step) are left out of the next-state terms.
    """
    label = success.long()
    loss = F.cross_entropy(state_logits[0], label) + F.cross_entropy(state_logits[1], label)
    weight = has_next.to(state_logits[0].dtype)
    if weight.sum() > 0:
        for logits in next_logits:
            loss = loss + (F.cross_entropy(logits, label, reduction="none") * weight).sum() / weight.sum()
    return loss


def orm_loss(yes_logit: torch.Tensor, no_logit: torch.Tensor, success: torch.Tensor) -> torch.Tensor:
    """The judge's cross-entropy over its two answers (YES, NO) at the first answer token."""
    logits = torch.stack([no_logit, yes_logit], dim=-1)
    return F.cross_entropy(logits, success.long())


def success_probability(logits: torch.Tensor) -> torch.Tensor:
    """A critic head's value: the softmax probability of class 1 (success)."""
    return torch.softmax(logits, dim=-1)[..., 1]
