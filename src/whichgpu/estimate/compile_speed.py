"""What ``torch.compile`` buys a training step: the share of the eager step its fusion
removes.

Eager PyTorch runs each elementwise operation between a layer's GEMMs (the norms and their
fp32 casts, rotary embeddings, the activation and its product, residual adds, the loss's
log-softmax) as a kernel of its own, each reading and writing whole activations from memory;
Inductor fuses each chain into one kernel (Ansel et al., 2024, "PyTorch 2", §4-5). That
traffic grows with the hidden size ``h`` a token, the GEMMs' FLOPs with ``h²``, so the share
of the eager step it takes goes as ``k / h``; compiling removes it:
``t_compiled = t_eager · (1 − k / h)``. ``k`` is the one number fitted, on runs published
with and without compile and nothing else changed (``catalog/data/compile_pairs.csv``):
each source's mean of ``(1 − r_eager / r_compiled) · h`` over its pairs, averaged over the
sources, so that one source's many pairs do not outweigh another's.
"""

from __future__ import annotations

from functools import cache

from whichgpu.catalog.records import CompilePair
from whichgpu.models.arch import ModelArch

#: The most of an eager step fusion is taken to remove (a model narrower than the pairs'
#: would otherwise read a share near 1)
MAX_REMOVED_SHARE = 0.5


@cache
def compile_pairs() -> tuple[CompilePair, ...]:
    from whichgpu.catalog.loader import read_package_table

    return tuple(row for _line, row in read_package_table("compile_pairs.csv", CompilePair))


def removed_share(pair: CompilePair) -> float:
    """The share of the eager step compiling removed in one published pair."""
    return 1 - pair.eager_tokens_per_s_per_gpu / pair.compiled_tokens_per_s_per_gpu


@cache
def width_constant(without_framework: str | None = None) -> tuple[float, int]:
    """``k`` (in hidden units) and the sources it rests on, fitted on every pair or on the
    pairs of every framework but ``without_framework`` (a framework's runs, validated
    against a ``k`` its own pairs took no part in)."""
    from whichgpu.models import resolve_model

    by_source: dict[str, list[float]] = {}
    for pair in compile_pairs():
        if pair.framework != without_framework:
            h = resolve_model(pair.model).hidden_size
            by_source.setdefault(pair.source, []).append(removed_share(pair) * h)
    if not by_source:
        return 0.0, 0
    means = [sum(values) / len(values) for values in by_source.values()]
    return sum(means) / len(means), len(means)


def compile_speedup(arch: ModelArch, without_framework: str | None = None) -> float:
    """How much faster a compiled step of ``arch`` runs than its eager one:
    ``1 / (1 − k / h)``."""
    k, _sources = width_constant(without_framework)
    if not arch.hidden_size or not k:
        return 1.0
    return 1 / (1 - min(k / arch.hidden_size, MAX_REMOVED_SHARE))
