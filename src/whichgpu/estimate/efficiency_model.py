"""The fitted throughput model: the efficiencies ``scripts/fit_efficiency.py`` writes to
``catalog/data/efficiency.csv``, how they combine into seconds per unit of work for an
:class:`~whichgpu.estimate.efficiency.Observation` (a measurement, or a user's job described
as one), and the frameworks' speed factors (``framework_efficiency.csv``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache, lru_cache

from whichgpu.estimate.efficiency import (
    DIFFUSION_FAMILY,
    PREDECESSOR,
    SERVE_FAMILY,
    TRAIN_FAMILY,
    Observation,
)
from whichgpu.estimate.streams import stream_term


def sustained_clock(power_w_per_tflops: float | None, terms: Mapping[str, float]) -> float:
    """Fraction of the boost clock a power-limited card sustains. Dynamic power is
    ``P ≈ C·V²·f`` and along the DVFS curve ``V`` grows with ``f``, so ``P ∝ f^k`` with
    k ≈ 3 (e.g. Kim et al., "Energy-efficient GPU design" / the cube law of CMOS DVFS): a
    board held at its TDP runs at ``(TDP / P_boost)^(1/k)`` of its boost clock. ``P_boost``
    is taken ∝ FP32 TFLOPS (units × clock); the threshold ``power:p0`` (W per TFLOPS needed
    to hold boost) and the exponent ``power:gamma`` (≈ 1/k) are fitted once for all GPUs."""
    if power_w_per_tflops is None:
        return 1.0
    p0 = terms.get("power:p0")
    gamma = terms.get("power:gamma", 0.0)
    if not p0 or gamma <= 0:
        return 1.0
    return float(min(1.0, power_w_per_tflops / p0) ** gamma)


#: The largest share of its datasheet bandwidth a GPU's memory-bound work reaches: the best
#: streaming copy the catalog holds (torch-copy rows of benchmarks.csv: RTX 4090 912 of
#: 1,008 GB/s, RTX 3090 831 of 936; HBM parts 73-85 %). A fit that would read a card's
#: decode faster than that (η · f above it) is held there, not at the datasheet.
MAX_BANDWIDTH_FRACTION = 0.90


def ceiling(unit: str) -> float:
    """The most of its peak a unit of work can run at: memory-bound work the best streaming
    copy's share of the bandwidth, compute-bound work the peak itself."""
    return MAX_BANDWIDTH_FRACTION if unit.endswith("memory") else 1.0


@dataclass(frozen=True)
class EfficiencyModel:
    """Fitted factors. Seconds per unit = ideal / (η_group · f_factor) + overhead / units per
    step, with η_group · f_factor capped at 1 and the overhead a property of the harness."""

    group: Mapping[tuple[str, str], float]
    factor: Mapping[str, float]
    overhead_s: Mapping[str, float]
    fitted_on: Mapping[str, int]
    #: Continuous terms shared by all GPUs (``power:p0``, ``power:gamma``)
    terms: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # efficiency() is pure in its arguments: the serving curves ask it the same thing at
        # every grid batch of every candidate, some 1,500 times a recommend
        object.__setattr__(self, "_memo", {})

    def efficiency(
        self,
        group: tuple[str, str],
        factor: str,
        unit: str = "tensor-16",
        power_w_per_tflops: float | None = None,
        memory: str = "hbm",
    ) -> tuple[float, str]:
        """η of a harness and regime on an architecture (``factor``); an architecture with no
        measurements takes its predecessor's factor in the same line (:data:`PREDECESSOR`),
        the memory class telling the lines apart."""
        key = (group, factor, unit, power_w_per_tflops, memory)
        memo: dict[tuple[object, ...], tuple[float, str]] = self._memo  # type: ignore[attr-defined]
        found = memo.get(key)
        if found is None:
            found = memo[key] = self._efficiency(group, factor, unit, power_w_per_tflops, memory)
        return found

    def _efficiency(
        self,
        group: tuple[str, str],
        factor: str,
        unit: str,
        power_w_per_tflops: float | None,
        memory: str,
    ) -> tuple[float, str]:
        eta = self.group.get(group)
        provenance = f"fitted on {self.fitted_on.get('|'.join(group), 0)} measurements"
        if eta is None:
            same = [v for (h, wl), v in self.group.items() if wl == group[1]]
            eta = sum(same) / len(same) if same else 0.5
            provenance = "prior: mean of other harnesses" if same else "prior: η = 0.5"
        f = self.factor.get(factor)
        family = next(
            (p for p in (DIFFUSION_FAMILY, SERVE_FAMILY, TRAIN_FAMILY) if factor.startswith(p)),
            "",
        )
        base = factor.removeprefix(family)
        if f is None and family == TRAIN_FAMILY:
            f, provenance = self._training_factor(base, memory, provenance)
        inherited = PREDECESSOR.get((base, memory))
        while f is None and inherited is not None:
            f = self.factor.get(family + inherited)
            if f is not None:
                provenance += f"; {base} not fitted: {inherited}'s factor"
            else:
                inherited = PREDECESSOR.get((inherited, memory))
        if f is None and family == SERVE_FAMILY and base in self.factor:
            f = self.factor[base]  # no serving run on the line: the architecture's own
            provenance += f"; {base}'s factor ({NO_SERVING_RUN})"
        if f is None:
            f = 1.0
            provenance += f"; {factor} not fitted"
        u = self.factor.get(f"unit:{unit}", 1.0)
        clock = sustained_clock(power_w_per_tflops, self.terms)
        return min(ceiling(unit), eta * f * u) * clock, provenance

    def _training_factor(
        self, architecture: str, memory: str, provenance: str
    ) -> tuple[float | None, str]:
        """An LLM training step's factor where none was fitted for ``architecture``: its own
        shared factor, else along :data:`PREDECESSOR` the first training or shared one."""
        line: str | None = architecture
        said = f"{provenance}; {architecture} not fitted for LLM training: "
        while line is not None:
            if line != architecture and f"{TRAIN_FAMILY}{line}" in self.factor:
                return self.factor[f"{TRAIN_FAMILY}{line}"], f"{said}{line}'s training factor"
            if line == architecture and line in self.factor:  # fitted, on other work
                return self.factor[line], f"{provenance}; {line}'s factor (no LLM training run)"
            if line in self.factor:
                return self.factor[line], f"{said}{line}'s factor"
            line = PREDECESSOR.get((line, memory))
        return None, provenance

    def alpha_s(self, harness: str, link: str = "nvlink") -> float:
        """One tensor-parallel all-reduce's start-up latency in ``harness``'s software over
        ``link`` (:func:`alpha_key`: its own fitted ``tp:latency_s:HARNESS[:pcie]``, else the
        harness's NVLink one, else the one shared term)."""
        shared = self.terms.get(f"tp:latency_s:{harness}", self.terms.get("tp:latency_s", 0.0))
        return self.terms.get(f"tp:latency_s:{alpha_key(harness, link)}", shared)

    def of(self, obs: Observation) -> tuple[float, str]:
        """:meth:`efficiency` of an observation's binding resource (the power-limited clock
        applies to compute-bound work only)."""
        compute = obs.bound == "compute"
        return self.efficiency(
            obs.group, obs.factor, obs.unit, obs.power_w_per_tflops if compute else None,
            obs.memory,
        )  # fmt: skip

    def seconds_per_unit(self, obs: Observation) -> float:
        compute = obs.bound == "compute"
        eta, _ = self.of(obs)
        ideal = obs.ideal_s * (1 - obs.other_share) / eta
        if obs.other_share:
            other, _ = self.efficiency(
                obs.group, obs.other_factor, obs.other_unit,
                None if compute else obs.power_w_per_tflops, obs.memory,
            )  # fmt: skip
            ideal += obs.ideal_s * obs.other_share / other
        overhead = self.overhead_s.get(obs.group[0], 0.0) / obs.units_per_step
        latency = self.alpha_s(obs.group[0], obs.link) * obs.collectives
        latency += obs.fixed_collective_s
        term = obs.stream_term or stream_term(obs.bench.regime)
        stream = self.streamed_s(obs.bench.regime, obs.stream_s, obs.memory, term)
        return ideal + latency + overhead + stream

    def streamed_s(self, regime: str, stream_s: float, memory: str, term: str = "") -> float:
        """Seconds the memory-bound kernels of ``regime``'s work take: ``stream_s`` (their
        traffic at full bandwidth) times the fitted passes (``term``'s, else the regime's),
        at the bandwidth efficiency of the GPU's ``memory`` class."""
        passes = self.terms.get(term or stream_term(regime), 0.0)
        return passes * stream_s / min(1.0, self.factor.get(memory, 1.0)) if passes else 0.0


def alpha_key(harness: str, link: str) -> str:
    """The name a harness's all-reduce start-up is fitted under: one over NVLink, one over
    PCIe (Hockney's α of the link's collective: TensorRT-LLM's one-shot kernels through peer
    memory on NVLink, NCCL on PCIe)."""
    return harness if link == "nvlink" else f"{harness}:{link}"


#: What a serving provenance says where the architecture's factor comes from other work
NO_SERVING_RUN = "no serving run"
#: What a serving provenance says where the engine's kernels for a mixture of experts were
#: never measured (:func:`~whichgpu.estimate.engine_choice.serving_provenance`)
NO_MOE_SERVING_RUN = "no MoE serving run"
#: What a serving provenance says where speculative decoding's gain rests on its mechanism
#: alone (:mod:`whichgpu.estimate.speculative`), no serving run of the fit measuring it
NO_SPECULATIVE_RUN = "speculative gain not calibrated"
#: What a serving provenance says where a mixture of experts runs attention data-parallel
#: and its experts expert-parallel (:attr:`~whichgpu.job.Job.attention_dp`): the fit's
#: serving runs are all tensor-parallel
NO_ATTENTION_DP_RUN = "no attention-DP serving run"
#: What a serving provenance says where prefill and decode run on separate workers
#: (:mod:`whichgpu.estimate.disaggregated`): no serving run of the fit ran so, and the
#: published comparisons read its workers' times far off (docs/serving-accuracy.md,
#: "Disaggregated prefill and decode")
NO_DISAGGREGATED_RUN = "no disaggregated serving run"
#: What a serving provenance says where the engine release's kernels for an MLA model
#: predate every build the fit's runs measured (:attr:`~whichgpu.job.engines.EngineProfile.
#: early_mla`): its range is the early builds' published errors
#: (:func:`early_build_band`)
EARLY_MLA_BUILD = "MLA kernels older than any measured build"
#: What a provenance says where no measurement of this GPU architecture and work calibrated
#: the estimate: a prior, another regime's factor, or a predecessor architecture's.
EXTRAPOLATED_MARKS = ("prior", "not fitted", "no LLM training run", NO_SERVING_RUN,
                      NO_MOE_SERVING_RUN, NO_SPECULATIVE_RUN, NO_ATTENTION_DP_RUN,
                      NO_DISAGGREGATED_RUN, EARLY_MLA_BUILD)  # fmt: skip


@lru_cache(maxsize=4096)
def extrapolated(provenance: str) -> bool:
    """Whether an estimate of ``provenance`` rests on a factor nobody measured for its GPU
    architecture and work (:data:`EXTRAPOLATED_MARKS`); once per text: a recommendation
    asks it of every option's runs, whose provenances are few."""
    return any(mark in provenance for mark in EXTRAPOLATED_MARKS)


@cache
def inherited_band() -> tuple[float, float]:
    """How far a factor taken from another regime can be from the one a measurement would
    fit, on the fit's own evidence (:func:`inherited_band_of` the shipped fit: Turing's image
    generation 0.65 × its shared factor, Hopper's 1.46 ×, in the current fit)."""
    return inherited_band_of(load_efficiency()[0])


def inherited_band_of(model: EfficiencyModel) -> tuple[float, float]:
    """The least and the most ratio of a regime's own factor (``diffusion:``, ``serve:``,
    ``llm:`` of an architecture) to the same architecture's shared factor, over every
    architecture where ``model`` fitted both."""
    ratios = [
        value / model.factor[base]
        for key, value in model.factor.items()
        for family in (DIFFUSION_FAMILY, SERVE_FAMILY, TRAIN_FAMILY)
        if key.startswith(family) and (base := key.removeprefix(family)) in model.factor
    ]
    return (min(ratios), max(ratios)) if ratios else (1.0, 1.0)


@cache
def load_efficiency() -> tuple[EfficiencyModel, dict[str, tuple[float, float]]]:
    """The fitted model and, per regime, its leave-one-out error spread (10th, 90th pct),
    from ``catalog/data/efficiency.csv`` (written by scripts/fit_efficiency.py)."""
    from whichgpu.catalog.loader import read_package_table
    from whichgpu.catalog.records import EfficiencyRow
    from whichgpu.errors import CatalogError

    rows = [row for _line, row in read_package_table("efficiency.csv", EfficiencyRow)]
    group: dict[tuple[str, str], float] = {}
    factor: dict[str, float] = {}
    overhead: dict[str, float] = {}
    fitted: dict[str, int] = {}
    terms: dict[str, float] = {}
    spread_low: dict[str, float] = {}
    spread_high: dict[str, float] = {}
    for row in rows:
        value, kind = row.value, row.kind
        if kind == "eta":
            group[(row.key, row.regime)] = value
            fitted[f"{row.key}|{row.regime}"] = row.fitted_on or 0
        elif kind == "factor":
            factor[row.key] = value
            fitted[row.key] = row.fitted_on or 0
        elif kind == "overhead":
            overhead[row.key] = value
        elif kind == "term":
            terms[row.key] = value
        elif kind == "spread_low":
            spread_low[row.regime] = value
        else:
            spread_high[row.regime] = value
    spread = {w: (spread_low[w], spread_high.get(w, 0.0)) for w in spread_low}
    if "*" not in spread:  # the range of a regime the fit has no spread for
        raise CatalogError("catalog/data/efficiency.csv", None, "no spread for regime '*'")
    return EfficiencyModel(group, factor, overhead, fitted, terms), spread


@cache
def load_framework_factors() -> dict[str, tuple[float, int]]:
    """Each framework's fitted speed factor and the published runs it rests on, from
    ``catalog/data/framework_efficiency.csv`` (written by scripts/fit_frameworks.py from
    validation/published_training.csv; see accuracy.published_runs)."""
    from whichgpu.catalog.loader import read_package_table
    from whichgpu.catalog.records import EfficiencyRow

    rows = [row for _line, row in read_package_table("framework_efficiency.csv", EfficiencyRow)]
    return {row.key: (row.value, row.fitted_on or 0) for row in rows if row.kind == "factor"}


#: The key of FP8 training's speed factor in ``catalog/data/framework_efficiency.csv``
#: (:func:`accuracy.published_runs.fit_fp8_factor`)
FP8_TRAIN_FACTOR = "fp8-train"
#: The key of an unpacked fine-tune's speed over a packed one's (the padding of its batches;
#: :func:`accuracy.published_runs.fit_factors` fits it on the published runs of padded
#: datasets)
PADDED_FACTOR = "padded"


@cache
def load_framework_spreads() -> dict[str, tuple[float, float]]:
    """The leave-one-source-out error range (10th, 90th percentile) of each factor
    ``catalog/data/framework_efficiency.csv`` gives one: an architecture's LLM training
    factor (:func:`accuracy.published_runs.fit_architecture_factors`), and a serving
    engine's host time a sequence, keyed by the engine
    (:func:`accuracy.published_serving.fit_sequence_times`)."""
    from whichgpu.catalog.loader import read_package_table
    from whichgpu.catalog.records import EfficiencyRow

    rows = [row for _line, row in read_package_table("framework_efficiency.csv", EfficiencyRow)]
    low = {r.key: r.value for r in rows if r.kind == "spread_low"}
    high = {r.key: r.value for r in rows if r.kind == "spread_high"}
    return {key: (value, high.get(key, 0.0)) for key, value in low.items()}


#: The key of the early engine builds' error range on MLA models in
#: ``catalog/data/framework_efficiency.csv``
#: (:func:`accuracy.published_serving.early_build_spread`)
EARLY_MLA_KEY = "early-mla"


def early_build_band(provenance: str) -> tuple[float, float] | None:
    """The error range (10th, 90th percentile, as a rate's: the estimate over the
    measurement, less one) that the published runs of early engine builds on MLA models
    (validation/published_serving_early.csv: DataCrunch's SGLang 0.4.1 and SGLang of
    2025-01-31, and vLLM's main of February 2025, serving DeepSeek-V3/R1) read at,
    planned at today's kernels, where ``provenance`` says the release's kernels are as old
    (:data:`EARLY_MLA_BUILD`); None elsewhere."""
    if EARLY_MLA_BUILD not in provenance:
        return None
    return load_framework_spreads().get(EARLY_MLA_KEY)
