"""The layouts NVIDIA's performance recipes run a pretraining job in: Megatron-Bridge's
presets (``scripts/performance/configs/llama/llama3_workload_base_configs.py`` and
``llama31_workload_base_configs.py``, NVIDIA-NeMo/Megatron-Bridge @00919dc and @0013c9a,
2026): per model, GPU, count and precision, the tensor, pipeline, context and virtual
pipeline degrees, the micro-batch and the global batch, at the recipes' 8,192-token
sequences. The runs of NeMo's and Megatron-Bridge's performance summaries, which the
``nemo`` calibration rows are, ran these.

Left out: presets that run Megatron-FSDP with CPU offloading of layers (the 70B's FP8 on
B200, the 405B's on GB200), which no whichgpu layout describes, and the GB200/GB300 ones
(NVL72 racks sold by the tray). Where a preset recomputes some layers (the 8B's FP8 on
H100: ``recompute_granularity="full"``, ``recompute_method="block"``,
``recompute_num_layers=5``), it runs so (:attr:`~whichgpu.job.Job.recompute_layers`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RecipeLayout:
    """One preset: its degrees, micro-batch and global batch, and where it is published."""

    tp: int
    pp: int
    cp: int
    vp: int
    batch: int
    global_batch: int
    preset: str
    #: Layers of each model chunk the preset recomputes in full (block method); 0: none
    recompute_layers: int = 0


#: The presets' sequence length (Megatron-Bridge's Llama 3 pretrain configs: seq_length 8192)
RECIPE_SEQ = 8192
SOURCE = "NVIDIA-NeMo/Megatron-Bridge scripts/performance/configs/llama"
AS_OF = "2026-04"

#: (models, GPU, count, precision) → the preset; Llama 3 and 3.1 share the architectures
LAYOUTS: dict[tuple[tuple[str, ...], str, int, str], RecipeLayout] = {
    (("llama-3.1-8b",), "h100-sxm", 8, "bf16-mixed"): RecipeLayout(
        1, 1, 2, 1, 1, 128, "LLAMA3_8B_PRETRAIN_CONFIG_H100_BF16_V1"
    ),
    (("llama-3.1-8b",), "h100-sxm", 8, "fp8-mixed"): RecipeLayout(
        1, 1, 1, 1, 1, 128, "LLAMA3_8B_PRETRAIN_CONFIG_H100_FP8_CS_V1", recompute_layers=5
    ),
    (("llama-3.1-8b",), "b200", 8, "bf16-mixed"): RecipeLayout(
        1, 1, 1, 1, 2, 128, "LLAMA3_8B_PRETRAIN_CONFIG_B200_BF16_V1"
    ),
    (("llama-3.1-8b",), "b200", 8, "fp8-mixed"): RecipeLayout(
        1, 1, 1, 1, 2, 128, "LLAMA3_8B_PRETRAIN_CONFIG_B200_FP8_CS_V1"
    ),
    (("llama-3.1-70b", "llama-3.3-70b"), "h100-sxm", 64, "bf16-mixed"): RecipeLayout(
        4, 4, 2, 5, 1, 128, "LLAMA3_70B_PRETRAIN_CONFIG_H100_BF16_V1"
    ),
    (("llama-3.1-70b", "llama-3.3-70b"), "h100-sxm", 64, "fp8-mixed"): RecipeLayout(
        4, 8, 1, 5, 1, 128, "LLAMA3_70B_PRETRAIN_CONFIG_H100_FP8_CS_V1"
    ),
    (("llama-3.1-70b", "llama-3.3-70b"), "b200", 64, "bf16-mixed"): RecipeLayout(
        2, 4, 2, 5, 1, 128, "LLAMA3_70B_PRETRAIN_CONFIG_B200_BF16_V1"
    ),
    (("llama-3.1-405b",), "h100-sxm", 1024, "bf16-mixed"): RecipeLayout(
        8, 8, 2, 8, 1, 512, "LLAMA31_405B_PRETRAIN_CONFIG_H100_BF16_V1"
    ),
    (("llama-3.1-405b",), "h100-sxm", 1024, "fp8-mixed"): RecipeLayout(
        8, 8, 2, 8, 1, 512, "LLAMA31_405B_PRETRAIN_CONFIG_H100_FP8_CS_V1"
    ),
    (("llama-3.1-405b",), "b200", 128, "bf16-mixed"): RecipeLayout(
        4, 8, 2, 8, 1, 64, "LLAMA31_405B_PRETRAIN_CONFIG_B200_BF16_V1"
    ),
    (("llama-3.1-405b",), "b200", 128, "fp8-mixed"): RecipeLayout(
        4, 8, 2, 8, 1, 64, "LLAMA31_405B_PRETRAIN_CONFIG_B200_FP8_CS_V1"
    ),
}


def recipe_layout(
    model: str, gpu: str, count: int, precision: str, seq: int
) -> RecipeLayout | None:
    """The performance recipe's layout of ``model`` pretrained on ``count`` × ``gpu`` in
    ``precision`` (the math format: ``fp8-mixed`` or ``bf16-mixed``) at ``seq`` tokens, or
    None where NVIDIA publishes none."""
    if seq != RECIPE_SEQ:
        return None
    for (models, on, gpus, math), layout in LAYOUTS.items():
        if model in models and on == gpu and gpus == count and math == precision:
            return layout
    return None
