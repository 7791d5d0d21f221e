"""The grouped ops write what vLLM's PyTorch-native ops write (their formula, restated here)."""

import torch

from webrl_vllm_cpu_lora import ops


def reference(inputs, weights, indices, dtype):
    selected = weights[indices].to(dtype=dtype)
    if selected.dim() == 4:
        selected = selected.squeeze(dim=1)
    return torch.einsum("bi, boi -> bo", inputs.to(dtype=dtype), selected)


def case(tokens, inner, outer, indices, stacked=True):
    generator = torch.Generator().manual_seed(tokens * 31 + inner)
    inputs = torch.randn(tokens, inner, generator=generator)
    shape = (4, 1, outer, inner) if stacked else (4, outer, inner)
    weights = torch.randn(*shape, generator=generator)
    return inputs, weights, torch.tensor(indices, dtype=torch.long)


MIXES = {
    "one adapter": [2] * 6,
    "two adapters and no adapter (-1)": [0, 0, 3, -1, 3, 0],
    "a single token": [1],
}


def test_shrink_matches_vllm_for_each_mix_of_adapters():
    for name, indices in MIXES.items():
        inputs, weights, index = case(len(indices), 24, 8, indices)
        out = torch.zeros(len(indices), 8)
        ops.bgmv_shrink(inputs, weights, out, index, 0.5)
        torch.testing.assert_close(out, 0.5 * reference(inputs, weights, index, out.dtype), msg=name)


def test_expand_adds_or_writes_and_keeps_the_common_width():
    for name, indices in MIXES.items():
        for add in (True, False):
            inputs, weights, index = case(len(indices), 8, 20, indices, stacked=False)
            start = torch.randn(len(indices), 18)
            out = start.clone()
            ops.bgmv_expand(inputs, weights, out, index, add)
            expected = reference(inputs, weights, index, out.dtype)[:, :18]
            torch.testing.assert_close(out, start + expected if add else expected, msg=f"{name}, add={add}")


def test_expand_slice_writes_only_its_slice():
    indices = MIXES["two adapters and no adapter (-1)"]
    inputs, weights, index = case(len(indices), 8, 5, indices)
    out = torch.ones(len(indices), 12)
    ops.bgmv_expand_slice(inputs, weights, out, index, 4, 5, True)
    expected = torch.ones(len(indices), 12)
    expected[:, 4:9] += reference(inputs, weights, index, out.dtype)
    torch.testing.assert_close(out, expected)


def test_one_row_of_products_is_added_to_every_output_row_as_in_vllm():
    inputs, weights, index = case(1, 8, 6, [0])
    out = torch.zeros(3, 6)
    ops.bgmv_expand(inputs, weights, out, index, True)
    torch.testing.assert_close(out, reference(inputs, weights, index, out.dtype).expand(3, 6))
