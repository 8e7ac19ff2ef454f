"""Parameter values in the reader's language: words (a bound, a market, a phase…) and the
known English phrases the estimators write (``fitted on 12 measurements``, ``tensor
parallel 2``), with their decimals in the reader's notation; names pass unchanged. The
notes (:mod:`whichgpu.notes`) and the tables render their parameters through
:func:`localize`."""

from __future__ import annotations

import re
from functools import cache

from whichgpu.i18n import N_, _, fmt

#: How a list is joined in running text (Japanese uses "、").
LIST_SEPARATOR = N_(", ")
#: How clauses are joined in running text (French sets a space before the semicolon).
CLAUSE_SEPARATOR = N_("; ")
#: A decimal number in an English phrase, written again in the reader's notation.
DECIMAL = r"^\d+\.\d+$"


#: Parameter values that are words (a bound, a market, a phase…), not names: rendered in the
#: reader's language. Compound values (``prior: η = 0.5; rt:2 not fitted``) are split on
#: ``"; "`` and each part matched against :data:`PHRASES`.
WORDS: dict[str, str] = {
    word: word
    for word in (
        N_("compute"), N_("memory bandwidth"), N_("interconnect"), N_("job"), N_("hour"),
        N_("new"), N_("used"), N_("undated"), N_("on-demand"), N_("spot"),
        N_("marketplace"), N_("serverless"), N_("forward"), N_("backward"),
        N_("recomputation"), N_("optimizer step"), N_("prefill"), N_("decode"), N_("loading"),
        N_("prior: mean of other harnesses"), N_("prior: η = 0.5"), N_("1 GPU"),
        N_("buy-new"), N_("buy-used"), N_("purchase"), N_("cost"), N_("time"), N_("value"),
        N_("NVIDIA DeepLearningExamples' ResNet-50 recipe"), N_("the DeiT recipe"),
        N_("the Hugging Face Trainer's default"), N_("MosaicML llm-foundry's pretraining recipes"),
        # the article's price rows' provider; tensor-figure bases; kinds of source
        N_("the article (C20)"), N_("dense"), N_("sparse"),
        N_("article"), N_("benchmark"), N_("config"), N_("datasheet"), N_("documentation"),
        N_("guide"), N_("news (third party)"), N_("press release"), N_("price catalog"),
        N_("price list"), N_("product page"), N_("reference"), N_("review"),
        N_("review (third party)"), N_("whitepaper"),
        # image generation: a pipeline's stages, its CPU offload modes, VAE tiling
        N_("text encoding"), N_("denoising"), N_("VAE decode"), N_("host link"), N_("none"),
        # a serving replica's bound where the engine's host launches bind (engines.host_layer_s)
        N_("host"),
        N_("model"), N_("sequential"), N_("on"), N_("off"), N_("cached"),
        N_("encoded each step"),
    )
} | {
    # capability codes (--requires) as readers name them
    "rt": N_("RT cores"), "display": N_("display outputs"), "ecc": N_("ECC memory"),
    "fp64": N_("FP64 units"), "nvlink": N_("NVLink"), "mig": N_("MIG"), "nvenc": N_("NVENC"),
    "nvdec": N_("NVDEC"), "cuda": N_("CUDA"),
    # what limits a served replica (whichgpu.estimate.serving_plan)
    "ttft": N_("time to first token"), "tpot": N_("time per output token"),
    "throughput": N_("throughput"),
    "slots": N_("its sequence slots, all busy"),
}  # fmt: skip
#: A phrase's pattern and its template (compiled on first use: no regex work at import)
PHRASES: tuple[tuple[str, str], ...] = (
    ((r"^fitted on (?P<n>\d+) measurements$"), N_("fitted on {n} measurements")),
    # a render's efficiency factor: the GPU's RT-core generation
    ((r"^rt:(?P<gen>\d+)$"), N_("RT cores of generation {gen}")),
    ((r"^(?P<factor>.+) not fitted$"), N_("{factor} not fitted")),
    (
        (r"^(?P<factor>.+) not fitted: (?P<inherited>.+)'s factor$"),
        N_("{factor} not fitted: {inherited}'s factor"),
    ),
    (
        (r"^(?P<factor>.+)'s factor \(no LLM training run\)$"),
        N_("{factor}'s factor (no LLM training run)"),
    ),
    (
        (
            r"^(?P<factor>.+) not fitted for LLM training: (?P<inherited>.+)'s training "
            r"factor$"
        ),
        N_("{factor} not fitted for LLM training: {inherited}'s training factor"),
    ),
    (
        (r"^(?P<factor>.+) not fitted for LLM training: (?P<inherited>.+)'s factor$"),
        N_("{factor} not fitted for LLM training: {inherited}'s factor"),
    ),
    ((r"^ZeRO-3 over (?P<n>\d+)$"), N_("ZeRO-3 over {n}")),
    ((r"^tensor parallel (?P<tp>\d+)$"), N_("tensor parallel {tp}")),
    (
        (r"^attention data parallel (?P<tp>\d+) \+ expert parallel (?P<ep>\d+)$"),
        N_("attention data parallel {tp} + expert parallel {ep}"),
    ),
    (
        (
            r"^attention data parallel (?P<tp>\d+) \+ expert parallel (?P<ep>\d+) × data "
            r"parallel (?P<dp>\d+)$"
        ),
        N_("attention data parallel {tp} + expert parallel {ep} × data parallel {dp}"),
    ),
    (
        (r"^tensor parallel (?P<tp>\d+) × pipeline (?P<pp>\d+)$"),
        N_("tensor parallel {tp} × pipeline {pp}"),
    ),
    (
        (r"^tensor parallel (?P<tp>\d+) × data parallel (?P<dp>\d+)$"),
        N_("tensor parallel {tp} × data parallel {dp}"),
    ),
    (
        (r"^tensor parallel (?P<tp>\d+) × pipeline (?P<pp>\d+) × data parallel (?P<dp>\d+)$"),
        N_("tensor parallel {tp} × pipeline {pp} × data parallel {dp}"),
    ),
    (
        (r"^tensor parallel (?P<tp>\d+) × context parallel (?P<cp>\d+)$"),
        N_("tensor parallel {tp} × context parallel {cp}"),
    ),
    (
        (
            r"^tensor parallel (?P<tp>\d+) × context parallel (?P<cp>\d+) × data parallel "
            r"(?P<dp>\d+)$"
        ),
        N_("tensor parallel {tp} × context parallel {cp} × data parallel {dp}"),
    ),
    (
        (
            r"^tensor parallel (?P<tp>\d+) × pipeline (?P<pp>\d+) × context parallel "
            r"(?P<cp>\d+)$"
        ),
        N_("tensor parallel {tp} × pipeline {pp} × context parallel {cp}"),
    ),
    (
        (
            r"^tensor parallel (?P<tp>\d+) × pipeline (?P<pp>\d+) × context parallel "
            r"(?P<cp>\d+) × data parallel (?P<dp>\d+)$"
        ),
        N_("tensor parallel {tp} × pipeline {pp} × context parallel {cp} × data parallel {dp}"),
    ),
    ((r"^data parallel (?P<n>\d+)$"), N_("data parallel {n}")),
    (
        (
            r"^× (?P<factor>[\d.]+) for FP8 training, fitted on (?P<n>\d+) published "
            r"BF16/FP8 pairs$"
        ),
        N_("× {factor} for FP8 training, fitted on {n} published BF16/FP8 pairs"),
    ),
    (
        (
            r"^× (?P<factor>[\d.]+) for (?P<architecture>.+)'s LLM training, fitted on "
            r"(?P<n>\d+) published runs$"
        ),
        N_("× {factor} for {architecture}'s LLM training, fitted on {n} published runs"),
    ),
    (
        (r"^speculative gain not calibrated \((?P<method>\w+)\)$"),
        N_("speculative gain not calibrated ({method})"),
    ),
    (
        (
            r"^× (?P<factor>[\d.]+) for padded batches \(not packed\), fitted on (?P<n>\d+) "
            r"published runs$"
        ),
        N_("× {factor} for padded batches (not packed), fitted on {n} published runs"),
    ),
    (
        (r"^× (?P<factor>[\d.]+) for (?P<framework>\S+), fitted on (?P<n>\d+) published runs$"),
        N_("× {factor} for {framework}, fitted on {n} published runs"),
    ),
    (
        (
            r"^× (?P<factor>[\d.]+) for torch.compile, fitted on (?P<n>\d+) sources' paired "
            r"runs$"
        ),
        N_("× {factor} for torch.compile, fitted on {n} sources' paired runs"),
    ),
    (
        (r"^× (?P<factor>[\d.]+) fitted on (?P<n>\d+) published fine-tuning runs$"),
        N_("× {factor} fitted on {n} published fine-tuning runs"),
    ),
    (
        (
            r"^\+ (?P<us>\d+) µs a running sequence a step for (?P<engine>.+), fitted on "
            r"(?P<n>\d+) published runs$"
        ),
        N_("+ {us} µs a running sequence a step for {engine}, fitted on {n} published runs"),
    ),
    (
        (
            r"^no host time a sequence carries across (?P<engine>.+)'s (?P<n>\d+) published "
            r"runs: none assumed$"
        ),
        N_("no host time a sequence carries across {engine}'s {n} published runs: none assumed"),
    ),
    (
        (r"^no MoE serving run of (?P<engine>.+): its experts' kernels taken as dense$"),
        N_("no MoE serving run of {engine}: its experts' kernels taken as dense"),
    ),
    (
        (
            r"^no MoE serving run of (?P<engine>.+) routing a token to (?P<k>\d+) of (?P<e>\d+) "
            r"experts: its routed GEMMs at the law its own MoE runs fit$"
        ),
        N_(
            "no MoE serving run of {engine} routing a token to {k} of {e} experts: its routed "
            "GEMMs at the law its own MoE runs fit"
        ),
    ),
    (
        (r"^no attention-DP serving run of (?P<engine>.+): its exchange and batches as planned$"),
        N_("no attention-DP serving run of {engine}: its exchange and batches as planned"),
    ),
    (
        (
            r"^MLA kernels older than any measured build: (?P<engine>.+) timed at today's "
            r"kernels, its range the early builds' published runs$"
        ),
        N_(
            "MLA kernels older than any measured build: {engine} timed at today's kernels, "
            "its range the early builds' published runs"
        ),
    ),
    ((r"^(?P<n>\d+) GPUs$"), N_("{n} GPUs")),
    ((r"^more than (?P<n>\d+)$"), N_("more than {n}")),
)


@cache
def _phrases() -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((re.compile(pattern), template) for pattern, template in PHRASES)


def localize(value: str) -> str:
    """A word or a known phrase in the reader's language; anything else (names) unchanged."""
    if ", " in value and all(item in WORDS for item in value.split(", ")):
        return _(LIST_SEPARATOR).join(_(WORDS[item]) for item in value.split(", "))
    parts, said = [], False  # (a name's own semicolons stay as they are)
    for part in value.split("; "):
        if part in WORDS:
            parts.append(_(WORDS[part]))
            said = True
            continue
        for pattern, template in _phrases():
            match = pattern.match(part)
            if match:  # the phrase's own parts in words too ("rt:2 not fitted"), its
                # decimals in the reader's notation (× 0.45 reads × 0,45 in French)
                words = {
                    k: float(v) if re.match(DECIMAL, v) else localize(v)
                    for k, v in match.groupdict().items()
                }
                part = fmt(_(template), **words)
                said = True
                break
        parts.append(part)
    return (_(CLAUSE_SEPARATOR) if said else "; ").join(parts)
