"""A vLLM general plugin: on the CPU platform, its LoRA ops replaced by the grouped ones in `ops`.

vLLM calls `register` in each of its processes. The PyTorch-native ops module is patched, so its
`sgmv_*` functions (which call `bgmv_*` by name) use the grouped products, and so is the CPU punica
wrapper, which imported the `bgmv_*` names before any plugin ran. Other platforms keep their kernels.
"""

import logging

from . import ops

NAMES = ("bgmv_shrink", "bgmv_expand", "bgmv_expand_slice")


def register() -> None:
    from vllm.platforms import current_platform

    if not current_platform.is_cpu():
        return
    import vllm.lora.ops.torch_ops as package
    import vllm.lora.ops.torch_ops.lora_ops as lora_ops
    import vllm.lora.punica_wrapper.punica_cpu as punica_cpu

    for module in (lora_ops, package, punica_cpu):
        for name in NAMES:
            setattr(module, name, getattr(ops, name))
    logging.getLogger("vllm").info("webrl-vllm-cpu-lora: LoRA ops grouped by adapter (one matrix product per adapter in a batch)")
