"""Which weight matrices a LoRA run adapts, as PEFT resolves ``target_modules``.

A target is a module name, matched as PEFT matches a string list: the module's path equals
it or ends with ``"." + target`` (``peft.tuners.tuners_utils.check_target_module_exists``),
so ``c_proj`` adapts both of GPT-2's ``attn.c_proj`` and ``mlp.c_proj`` and ``attn.c_proj``
only the first. Named sets:

* ``peft-default``: what ``LoraConfig(target_modules=None)`` takes, PEFT's per-architecture
  table ``TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING`` (peft/utils/constants.py);
* ``all-linear``: PEFT's ``"all-linear"``, every linear layer but the output head;
* ``attention``: the attention projections (query, key, value and output).
"""

from __future__ import annotations

from functools import lru_cache

from whichgpu.models.arch import Linear, ModelArch

#: PEFT's ``TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING`` (huggingface/peft
#: src/peft/utils/constants.py at 5d602fd, 0.20.1.dev0), by Hugging Face ``model_type``, for
#: the families whichgpu parses. phi3, qwen2_moe and deepseek_v2/v3 have no entry (PEFT asks
#: for ``target_modules``): whichgpu then takes the attention projections.
PEFT_DEFAULT_TARGETS: dict[str, tuple[str, ...]] = {
    "llama": ("q_proj", "v_proj"),
    "mistral": ("q_proj", "v_proj"),
    "mixtral": ("q_proj", "v_proj"),
    "qwen2": ("q_proj", "v_proj"),
    "gemma": ("q_proj", "v_proj"),
    "gemma2": ("q_proj", "v_proj"),
    "gpt2": ("c_attn",),
    "gptj": ("q_proj", "v_proj"),
    "gpt_neox": ("query_key_value",),
    "falcon": ("query_key_value",),
    "mpt": ("Wqkv",),
    "bert": ("query", "value"),
}

NAMED_SETS = ("peft-default", "all-linear", "attention")


def matches(path: str, target: str) -> bool:
    """PEFT's string-list rule: the path is the target or ends with ``.target``."""
    return path == target or path.endswith("." + target)


def target_names(arch: ModelArch, spec: str) -> tuple[str, ...] | None:
    """The module names a spec stands for (None: a role-based set, see :func:`adapted`)."""
    if spec == "peft-default":
        return PEFT_DEFAULT_TARGETS.get(arch.family)
    if spec in ("all-linear", "attention"):
        return None
    return tuple(name.strip() for name in spec.split(",") if name.strip())


@lru_cache(maxsize=1024)
def adapted(arch: ModelArch, spec: str) -> tuple[Linear, ...]:
    """The linears of ``arch`` a LoRA run with targets ``spec`` adapts. A family PEFT has no
    default for (it asks for ``target_modules``) takes the attention projections."""
    names = target_names(arch, spec)
    if spec == "all-linear":
        return tuple(lin for lin in arch.linears if lin.role != "head")
    if names is None:
        return tuple(lin for lin in arch.linears if lin.role == "attn")
    return tuple(lin for lin in arch.linears if any(matches(lin.name, t) for t in names))


def unknown_targets(arch: ModelArch, spec: str) -> list[str]:
    """Names in a module list that match no linear of ``arch`` (PEFT raises for those)."""
    if spec in NAMED_SETS:
        return []
    names = target_names(arch, spec) or ()
    return [t for t in names if not any(matches(lin.name, t) for lin in arch.linears)]


def module_names(arch: ModelArch) -> list[str]:
    """The linears' own names (last component), what a user types: ``q_proj``, ``c_attn``."""
    seen: dict[str, None] = {}
    for lin in arch.linears:
        seen.setdefault(lin.name.rsplit(".", 1)[-1], None)
    return list(seen)
