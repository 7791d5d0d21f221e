"""LoRA's shrink and expand products, grouped by adapter.

vLLM's CPU build (0.32) computes them with its PyTorch-native ops (vllm/lora/ops/torch_ops), which copy
the adapter's whole weight matrix once per token (`weights[indices]`) and then multiply token by token.
On a 400-token prompt that costs more than the base model's own linear layers. These functions take the
same arguments and write the same values, with one matrix product per adapter present in the batch.
"""

import torch


def _products(inputs: torch.Tensor, weights: torch.Tensor, indices: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Row b of the result is weights[indices[b]] @ inputs[b], as vLLM's `einsum("bi, boi -> bo")`."""
    if weights.dim() == 4:
        weights = weights.squeeze(dim=1)
    inputs = inputs.to(dtype=dtype)
    present = torch.unique(indices)
    if present.numel() == 1:
        return inputs @ weights[present[0]].to(dtype=dtype).T
    out = inputs.new_empty((inputs.shape[0], weights.shape[1]))
    for index in present:
        rows = indices == index
        out[rows] = inputs[rows] @ weights[index].to(dtype=dtype).T
    return out


def bgmv_shrink(inputs, lora_a_weights, output_tensor, lora_indices_tensor, scaling=1.0):
    outputs = _products(inputs, lora_a_weights, lora_indices_tensor, output_tensor.dtype)
    output_tensor[:, : outputs.shape[1]] = scaling * outputs


def bgmv_expand(inputs, lora_b_weights, output_tensor, lora_indices_tensor, add_inputs=True):
    outputs = _products(inputs, lora_b_weights, lora_indices_tensor, output_tensor.dtype)
    # As vLLM's: a single row of products is added to every output row; the adapter and the model may pad differently.
    limit = 1 if outputs.shape[0] == 1 and output_tensor.shape[0] != 1 else output_tensor.shape[0]
    common = min(outputs.shape[1], output_tensor.shape[1])
    if add_inputs:
        output_tensor[:, :common] += outputs[:limit, :common]
    else:
        output_tensor[:, :common] = outputs[:limit, :common]


def bgmv_expand_slice(inputs, lora_b_weights, output_tensor, lora_indices_tensor, slice_offset, slice_size, add_inputs=True):
    outputs = _products(inputs, lora_b_weights, lora_indices_tensor, output_tensor.dtype)
    if add_inputs:
        output_tensor[:, slice_offset : slice_offset + slice_size] += outputs
    else:
        output_tensor[:, slice_offset : slice_offset + slice_size] = outputs
