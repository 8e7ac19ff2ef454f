"""A served mixture of experts' routed experts at their own efficiency.

An MoE layer does not run its routed experts as one dense GEMM: the router picks each
token's ``top_k`` experts, the tokens are permuted into per-expert groups, each expert's
GEMMs run on its own group (a grouped GEMM over ``B·k/E`` rows an expert, far fewer than the
dense layers' ``B``), and the outputs are permuted back and weighted (Gale et al., 2023,
"MegaBlocks", §3-4; the engines' fused MoE kernels: vLLM's ``fused_moe``, TensorRT-LLM's
``CutlassFusedMoE``; DeepSeek-V3, arXiv:2412.19437, §3.4, on the routing and dispatch). A
served step charges those routed FLOPs at ``η_r`` of the dense GEMMs' efficiency. A small
GEMM fills fewer of the GPU's tiles and waves than a large one (NVIDIA, "Matrix
Multiplication Background User's Guide", tile and wave quantization), and an expert's weight
matrix is small (``hidden × moe_intermediate``: Qwen3-30B-A3B's 2,048 × 768 against
Llama 4 Maverick's 5,120 × 8,192), so ``η_r`` follows a power law in it,
``η_r = min(1, η₀ · (S / S₀)^b)``.

The law is an engine's: ``η₀`` and ``b`` are fitted end to end on that engine's own
published MoE runs (scripts/fit_frameworks.py,
:func:`accuracy.published_serving.fit_routed_efficiency`), and a step takes the law of the
engine it is planned on (:attr:`~whichgpu.job.Job.moe_kernels`). Fitted on every source
together, TensorRT-LLM's post-v1.0 tables, vLLM's and SGLang's runs, a law did not carry
from one publication to the next (each left out read worse than at ``η_r`` = 1): the
slowness is TensorRT-LLM's MoE path's, not every engine's. A measurement of the efficiency
fit takes its harness's law (TensorRT-LLM v0.17's Mixtral rows are among the runs the law is
fitted on, so that the two fits agree on them); an engine with no law runs the routed
experts at the dense GEMMs' efficiency. The dense GEMMs, attention and the shared experts
keep the serving fit's η.

Training keeps every FLOP at the fit's η: no MoE training run calibrates ``η_r``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache, lru_cache

from whichgpu.estimate.perf import forward_flops_per_token, routed_active_params
from whichgpu.models.arch import ModelArch

#: The keys of an engine's routed experts' law in ``catalog/data/framework_efficiency.csv``
#: (``η₀`` and ``b``), each followed by ``:`` and the engine family
ROUTED_FACTOR = "moe-routed"
ROUTED_SLOPE = "moe-routed-slope"
#: ``S₀``: the expert GEMM size (weight elements of one of an expert's matrices) ``η₀`` is
#: stated at
REFERENCE_GEMM_SIZE = 1e7

_fitting: list[float] = []


@cache
def _fitted() -> dict[str, tuple[float, float]]:
    from whichgpu.catalog.loader import read_package_table
    from whichgpu.catalog.records import EfficiencyRow

    rows = read_package_table("framework_efficiency.csv", EfficiencyRow)
    values = {row.key: row.value for _line, row in rows if row.kind == "factor"}
    prefix = ROUTED_FACTOR + ":"
    engines = [key.removeprefix(prefix) for key in values if key.startswith(prefix)]
    return {e: (values[prefix + e], values.get(f"{ROUTED_SLOPE}:{e}", 0.0)) for e in engines}


def routed_engines() -> tuple[str, ...]:
    """The engine families with a fitted routed experts' law."""
    return tuple(sorted(_fitted()))


def expert_gemm_size(arch: ModelArch) -> float:
    """``S``: the weight elements of one of an expert's GEMMs, ``hidden × moe_intermediate``."""
    return float(arch.hidden_size * arch.moe_intermediate_size)


def routed_efficiency(arch: ModelArch, kernels: str) -> float:
    """``η_r``: ``arch``'s routed experts' GEMMs' efficiency over the dense GEMMs' on the
    engine family ``kernels``: its fitted law's (or the one :func:`fitting` tries, for every
    model), 1 for an engine without one."""
    if _fitting:
        return _fitting[-1]
    law = _fitted().get(kernels)
    size = expert_gemm_size(arch)
    if law is None or size <= 0:
        return 1.0
    eta0, slope = law
    return min(1.0, float(eta0 * (size / REFERENCE_GEMM_SIZE) ** slope))


@contextmanager
def fitting(eta: float) -> Iterator[None]:
    """Plan with ``η_r`` = ``eta`` inside the block (the fit's trial values): the planner's
    memoised curves and rates are cleared on the way in and out, as they were read at
    another ``η_r``."""
    _fitting.append(eta)
    _forget()
    try:
        yield
    finally:
        _fitting.pop()
        _forget()


def _forget() -> None:
    """Clear every memoised function of whichgpu's loaded modules (a fit's tool: a request
    never changes ``η_r``)."""
    import sys

    for name, module in list(sys.modules.items()):
        if not name.startswith("whichgpu."):
            continue
        for value in list(vars(module).values()):
            clear = getattr(value, "cache_clear", None)
            if callable(clear) and getattr(value, "__module__", None) == name:
                clear()


def routed_flops_per_token(arch: ModelArch, kernels: str) -> float:
    """The routed experts' forward FLOPs a token, ``2·N_routed``, counted at the dense GEMMs'
    efficiency: over ``η_r`` on ``kernels`` (0 for a dense model)."""
    return 2.0 * routed_active_params(arch) / routed_efficiency(arch, kernels)


@lru_cache(maxsize=8192)
def served_flops_per_token(arch: ModelArch, context: int, kernels: str) -> float:
    """:func:`~whichgpu.estimate.perf.forward_flops_per_token` with the routed experts'
    share counted at their own efficiency on ``kernels`` (:func:`routed_flops_per_token`);
    once per (model, context, kernels): a serving curve asks it of each step it times
    (cleared with the other memos where a fit changes ``η_r``: :func:`fitting`)."""
    routed = 2.0 * routed_active_params(arch)
    return forward_flops_per_token(arch, context) - routed + routed_flops_per_token(arch, kernels)
