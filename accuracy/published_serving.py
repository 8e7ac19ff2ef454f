"""The serving planner against published serving runs it was not fitted on
(validation/published_serving.csv): maximum-load throughput (TensorRT-LLM's performance
overviews of v0.14 and v0.20; SGLang's and vLLM's ShareGPT runs), latency at an offered
rate (TensorRT-LLM's online-serving table; SGLang's comparison with vLLM) and MLPerf's server
scenario (a rate sustained under TTFT and TPOT limits at p99).

The serving roofline is fitted on TensorRT-LLM's v0.5/v0.6.1, v0.17 and v1.0 tables
(``catalog/data/benchmarks.csv``); none of these rows is, so every error here is out of
sample. Each row is planned as its source ran it: the engine's profile, the precision, the
GPUs split into replicas of ``tp``, the lengths (ShareGPT runs at the vLLM blog's means, 202
in and 179 out).
"""

from __future__ import annotations

import bisect
import csv
import io
import math
import statistics
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from whichgpu.catalog.records import GPU
    from whichgpu.estimate.burst import Law
    from whichgpu.estimate.serving_types import ServingPlan
    from whichgpu.job import Job
    from whichgpu.job.engines import EngineProfile
    from whichgpu.models.arch import ModelArch


@dataclass(frozen=True)
class ServingCheck:
    id: str
    kind: str
    engine: str
    source: str
    metric: str
    estimated: float | None
    measured: float
    gpus: int
    tp: int
    #: Why the row could not be planned ("" when it was)
    excluded: str = ""
    #: The likely range a served estimate of this row states, as ratios of the measurement
    #: to the estimate (the serving fit's band for a rate, each latency's own for a latency:
    #: :func:`~whichgpu.estimate.latency_range.latency_band`; wider where it rests on an
    #: unmeasured factor)
    band: tuple[float, float] = (1.0, 1.0)

    @property
    def inside(self) -> bool | None:
        """Whether the measurement falls in the stated range (None: not estimated)."""
        if self.estimated is None:
            return None
        return self.band[0] <= self.measured / self.estimated <= self.band[1]

    @property
    def error(self) -> float | None:
        if self.estimated is None or not self.measured:
            return None
        return self.estimated / self.measured - 1

    @property
    def link(self) -> str:
        return "pcie" if self.gpus > 1 and "pcie" in self.id else "nvlink"


def check_serving(
    text: str, sequence_times: Mapping[str, float] | None = None
) -> list[ServingCheck]:
    """Plan every row of the CSV ``text`` and compare with what its source measured, each
    engine at its host time per sequence in ``sequence_times`` (0 where it has none; None:
    the shipped ones, :func:`~whichgpu.job.engine_times.load_sequence_times`). A row's
    ``max_sequences`` is its engine's batch limit at the version it ran, where that differs
    from the profile's, and its ``scheduler_steps`` the decode steps a scheduler pass ran
    (vLLM 0.6's ``--num-scheduler-steps``), where the run set them, its ``memory_fraction``
    where its version's default differs from the profile's (vLLM's ``gpu_memory_utilization``
    was 0.9 through its 2024-2025 releases: the v0.6.4 engine arguments, "If unspecified, will
    use the default value of 0.9"; the profile's 0.92 is 0.33's), its ``layout`` ``dep``
    where it ran attention data-parallel with expert-parallel MoE, its ``harness``
    ``trtllm-bench`` where that command set the batch limit
    (:func:`~whichgpu.estimate.bench_batch.bench_max_batch`), and its ``step_tokens`` where
    its version prefilled prompts whole, up to that many tokens a step (vLLM's V0 engine at
    32K tokens of context or less, TensorRT-LLM's ``--max_num_tokens``). A closed loop's
    time to first token is its users' prompts prefilled in groups (:func:`_closed_loop_ttft`)."""
    from whichgpu.catalog import load_catalog
    from whichgpu.errors import WhichGPUError
    from whichgpu.estimate.bench_batch import bench_max_batch
    from whichgpu.estimate.engine_choice import serving_provenance
    from whichgpu.estimate.kv_pool import pool_band
    from whichgpu.estimate.latency_range import (
        borrowed_step_s,
        latency_band,
        rate_band,
        widened,
    )
    from whichgpu.estimate.serving_plan import Targets, replica_plan
    from whichgpu.inputs.job_input import make_job
    from whichgpu.job import QUANT_BITS
    from whichgpu.job.engine_releases import engine_profile
    from whichgpu.job.engine_times import family
    from whichgpu.models import resolve_model

    catalog = load_catalog()
    if sequence_times is None:
        from whichgpu.job.engine_times import load_sequence_times

        sequence_times = {engine: s for engine, (s, _n) in load_sequence_times().items()}
    out = []
    for row in csv.DictReader(io.StringIO(text)):
        gpu = catalog.resolve(row["gpu"])
        arch = resolve_model(row["model"])
        gpus, tp = int(row["gpus"]), int(row["tp"])
        precision = row["precision"]
        quant = precision if precision in QUANT_BITS else None
        job = make_job(
            task="inference",
            precision=None if quant else precision,
            quant=quant,
            prompt=int(row["prompt"]),
            generate=int(row["generate"]),
            seq=int(row["prompt"]),
            all_logits=False,
        )
        kind, metric = row["kind"], row["metric"]
        # a closed loop of N users (a benchmark's --max-concurrency): the replica at N
        # sequences in flight, every slot busy
        concurrency = int(row.get("concurrency") or 0) or None
        replicas = max(1, gpus // tp)
        engine = engine_profile(row["engine"])
        job = engine.served_job(job)  # its KV cache as the engine takes it from the checkpoint
        dep = row.get("layout") == "dep"  # attention data-parallel, experts expert-parallel
        if dep:
            from whichgpu.frozen import evolve

            job = evolve(job, attention_dp=True)
        if row.get("scheduler_steps"):  # the version's multi-step scheduling, as it ran
            engine = replace(engine, scheduler_steps=int(row["scheduler_steps"]))
        if row.get("memory_fraction"):  # the version's KV share of the memory, as it ran
            engine = replace(engine, memory_fraction=float(row["memory_fraction"]))
        if row.get("step_tokens"):  # the version's prompts whole, this many tokens a step
            engine = _whole_prompts(engine, int(row["step_tokens"]))
        targets = Targets()
        demand = None
        if kind == "server":
            targets = Targets(
                float(row["ttft_limit_s"]), float(row["tpot_limit_s"]), float(row["percentile"])
            )
        elif kind == "online":
            demand = float(row["rate_rps"])
            targets = Targets(quantile=0.5)
        estimated: float | None = None
        excluded = ""
        limit = int(row.get("max_sequences") or 0) or concurrency
        if row.get("harness") == "trtllm-bench":  # the batch its heuristic set, a rank's
            limit = bench_max_batch(arch, job, gpu, tp) * (tp if dep else 1)
        try:
            plan = replica_plan(arch, job, gpu, tp, engine, targets, demand_rps=demand,
                                sequence_s=sequence_times.get(family(engine.id), 0.0),
                                replicas=1 if kind != "server" else replicas,
                                max_sequences=limit)  # fmt: skip
        except WhichGPUError as err:
            plan, excluded = None, str(err)
        if plan is None:
            excluded = excluded or "the KV cache holds no sequence"
        elif kind in ("max", "concurrency") and metric.endswith("tokens_per_s"):
            estimated = plan.capacity.tokens_per_s(job.generate) * replicas
            if requests := int(row.get("requests") or 0):  # sent at once: the run drains
                host_s = sequence_times.get(family(engine.id), 0.0)
                estimated = _finite_rate(arch, job, gpu, engine, plan, row, requests, replicas,
                                         limit, host_s)  # fmt: skip
            if metric == "total_tokens_per_s":  # prompts and outputs, as vllm bench counts
                estimated *= (job.prompt + job.generate) / job.generate
        elif kind == "concurrency" and metric == "ttft_s":  # its users' prompts in groups
            estimated = _closed_loop_ttft(arch, job, gpu, engine, plan, row, limit,
                                          sequence_times.get(family(engine.id), 0.0))  # fmt: skip
        elif kind == "concurrency":
            estimated = plan.capacity.tpot_s
        elif kind == "server":
            estimated = plan.capacity.rate_rps * replicas
        elif plan.capacity.rate_rps < (demand or 0):
            excluded = "the offered rate is beyond the replica's capacity"
        else:
            estimated = plan.operating.ttft_s if metric == "ttft_s" else plan.operating.tpot_s
        said = serving_provenance(engine, arch, gpu, attention_dp=dep)
        band = (1.0, 1.0)
        if plan is not None:  # the ranges the answer states (plan.core), at the point read
            point = plan.operating if kind == "online" else plan.capacity
            borrowed_s = borrowed_step_s(engine.id, engine.harness)
            pool = pool_band(arch, job, gpu, tp, engine, plan.max_sequences)
            band = rate_band(said, borrowed_s, plan.capacity.tpot_s, engine.id, pool)
            if metric in ("ttft_s", "tpot_s"):  # a latency: its own range
                time_s = point.ttft_s if metric == "ttft_s" else point.tpot_s
                band = widened(latency_band(metric.removesuffix("_s"), said), borrowed_s, time_s)
        out.append(
            ServingCheck(
                row["id"],
                kind,
                row["engine"],
                row["source"],
                metric,
                estimated,
                float(row["value"]),
                gpus,
                tp,
                excluded=excluded,
                band=band,
            )
        )
    return out


def _whole_prompts(engine: EngineProfile, step_tokens: int) -> EngineProfile:
    """``engine`` as a release that prefilled prompts whole, up to ``step_tokens`` a step
    (vLLM's V0 engine, whose chunked prefill was on only past 32K tokens of context, took up
    to ``max_model_len`` a step; TensorRT-LLM's ``--max_num_tokens``)."""
    large = engine.large_gpu
    return replace(engine, prefill_chunk_tokens=0, step_token_limit=step_tokens,
                   large_gpu=None if large is None else (*large[:3], 0))  # fmt: skip


def _closed_loop_ttft(
    arch: ModelArch,
    job: Job,
    gpu: GPU,
    engine: EngineProfile,
    plan: ServingPlan,
    row: Mapping[str, str],
    limit: int | None,
    sequence_s: float,
) -> float:
    """A ``--max-concurrency`` run's time to first token: its users' prompts prefilled in
    the groups the first wave formed where the dataset fixes every length (``fixed``: a
    random dataset at a range ratio that fixes them, :func:`~whichgpu.estimate.burst.
    closed_loop_ttft_s`); a spread of lengths (``sharegpt``, or ``random`` lengths drawn
    from a range) ends its sequences apart, and its prompts arrive alone."""
    from whichgpu.estimate.burst import closed_loop_ttft_s, plan_curve

    curve = plan_curve(arch, job, gpu, engine, plan, limit, sequence_s)
    if curve is None or not curve.continuous or limit is None:
        return plan.capacity.ttft_s
    law: Law = "fixed" if row.get("dataset") == "fixed" else "exponential"
    return closed_loop_ttft_s(curve, limit, law, engine.step_token_limit,
                              decodes=engine.decodes_in_budget)  # fmt: skip


def _finite_rate(
    arch: ModelArch,
    job: Job,
    gpu: GPU,
    engine: EngineProfile,
    plan: ServingPlan,
    row: Mapping[str, str],
    requests: int,
    replicas: int,
    limit: int | None,
    sequence_s: float,
) -> float:
    """Output tokens/s over a run of ``requests`` sent at once (``--request-rate inf``, the
    ``requests`` column): their work at the replicas' ceiling, then the drain
    (:func:`~whichgpu.estimate.burst.drain_s`), ShareGPT's lengths exponential up to what
    vLLM's sampler keeps (2,048 tokens in all; SGLang's bench_serving keeps longer ones only
    where asked, and at these means the fluid drain ends before either), a random
    dataset's fixed."""
    from whichgpu.estimate.burst import run_drain_s

    rate_rps = plan.capacity.rate_rps * replicas
    if rate_rps <= 0:
        return 0.0
    sharegpt = (row.get("dataset") or "") == "sharegpt"
    longest = 2048 - job.prompt if sharegpt else job.generate
    drain = run_drain_s(arch, job, gpu, engine, plan, math.ceil(requests / replicas),
                        "exponential" if sharegpt else "fixed", longest, limit or None,
                        sequence_s)  # fmt: skip
    return requests * job.generate / (requests / rate_rps + drain)


#: The range searched for an engine's host time per sequence in a decode step (s)
SEQUENCE_S_RANGE = (0.0, 500e-6)
#: An engine's time is fitted only where its maximum-load runs come from this many sources,
#: so that leaving one out still leaves a fit to check it with
MIN_SOURCES = 2


def _max_rows(text: str, engine: str) -> list[dict[str, str]]:
    return [
        row
        for row in csv.DictReader(io.StringIO(text))
        if row["engine"] == engine and row["kind"] == "max"
    ]


def _as_text(rows: list[dict[str, str]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def _log_errors(rows: list[dict[str, str]], engine: str, seconds: float) -> list[float]:
    runs = check_serving(_as_text(rows), {engine: seconds})
    return [math.log1p(r.error) for r in runs if r.error is not None]


def fit_time(rows: list[dict[str, str]], engine: str) -> float:
    """The host seconds per sequence that minimise the squared log errors of ``rows``'
    maximum-load throughput, each row weighted by one over its source's rows, so that each
    publication counts once however many runs it gives (golden-section search over
    :data:`SEQUENCE_S_RANGE`: the error falls monotonically with the time, so the weighted
    sum of squares has one minimum)."""
    low, high = SEQUENCE_S_RANGE
    ratio = (math.sqrt(5) - 1) / 2

    def cost(seconds: float) -> float:
        runs = [r for r in check_serving(_as_text(rows), {engine: seconds}) if r.error]
        per_source = Counter(r.source for r in runs)
        return sum(math.log1p(r.error) ** 2 / per_source[r.source] for r in runs if r.error)

    a, b = high - ratio * (high - low), low + ratio * (high - low)
    cost_a, cost_b = cost(a), cost(b)
    for _ in range(40):
        if cost_a <= cost_b:
            high, b, cost_b = b, a, cost_a
            a = high - ratio * (high - low)
            cost_a = cost(a)
        else:
            low, a, cost_a = a, b, cost_b
            b = low + ratio * (high - low)
            cost_b = cost(b)
    best = (low + high) / 2
    return 0.0 if cost(0.0) <= cost(best) else best


def leave_one_source_out(text: str, engine: str) -> dict[str, float]:
    """Each of ``engine``'s maximum-load runs' error with the time fitted on the other
    sources' runs (none where no other source has runs: the run at no time)."""
    rows = _max_rows(text, engine)
    out = {}
    for source in sorted({row["source"] for row in rows}):
        others = [row for row in rows if row["source"] != source]
        held = [row for row in rows if row["source"] == source]
        seconds = fit_time(others, engine) if others else 0.0
        for run in check_serving(_as_text(held), {engine: seconds}):
            if run.error is not None:
                out[run.id] = run.error
    return out


def fit_sequence_times(text: str) -> dict[str, tuple[float, int, float, float]]:
    """Per engine but the reference (:data:`~whichgpu.job.engines.REFERENCE_ENGINE`), the host
    time per sequence fitted on its maximum-load runs, how many there are, and the 10th and
    90th percentiles of their leave-one-source-out errors (the range an estimate on the
    engine states where it is wider than the serving fit's): only engines with runs from
    :data:`MIN_SOURCES` sources, and only times that predict each source's runs, fitted on
    the others, better than none (the median absolute error): a time that does not carry
    from one publication to the next is not a property of the engine, which then runs at
    none (0, on its runs: checked, and searched as such; its range then the errors at
    none)."""
    from accuracy.published_runs import _percentile
    from whichgpu.job.engines import REFERENCE_ENGINE

    engines = sorted({row["engine"] for row in csv.DictReader(io.StringIO(text))})
    out = {}
    for engine in engines:
        rows = _max_rows(text, engine)
        if engine == REFERENCE_ENGINE or len({row["source"] for row in rows}) < MIN_SOURCES:
            continue
        held_out = leave_one_source_out(text, engine)
        without = [abs(math.expm1(e)) for e in _log_errors(rows, engine, 0.0)]
        carries = statistics.median(abs(e) for e in held_out.values()) < statistics.median(without)
        errors = sorted(held_out.values() if carries else (math.expm1(e) for e in
                        _log_errors(rows, engine, 0.0)))  # fmt: skip
        out[engine] = (fit_time(rows, engine) if carries else 0.0, len(rows),
                       _percentile(errors, 0.1), _percentile(errors, 0.9))  # fmt: skip
    return out


#: The routed experts' efficiencies over the dense GEMMs' each MoE run is planned at, in log
#: space (:mod:`whichgpu.estimate.routed_experts`): a row's error between them is read on the
#: line through its neighbours, so that a fit tries any law without planning again
ROUTED_GRID = tuple(math.exp(math.log(0.04) * (1 - i / 24)) for i in range(25))
#: The slopes tried for the law's ``b`` (``η_r`` against the expert's GEMM size)
ROUTED_SLOPES = tuple(i / 100 for i in range(0, 101))


def _moe_max_rows(text: str, engine: str) -> list[dict[str, str]]:
    """``engine``'s (its family's) MoE throughput runs in the CSV ``text``."""
    from whichgpu.job.engine_times import family
    from whichgpu.models import resolve_model

    return [row for row in csv.DictReader(io.StringIO(text))
            if family(row["engine"]) == engine and row["kind"] in ("max", "concurrency")
            and row["metric"].endswith("tokens_per_s")
            and resolve_model(row["model"]).is_moe]  # fmt: skip


def _routed_table(rows: list[dict[str, str]]) -> dict[str, list[float]]:
    """Each row's log error (estimate over measurement) at each of :data:`ROUTED_GRID`."""
    from whichgpu.estimate.routed_experts import fitting

    table: dict[str, list[float]] = {}
    for eta in ROUTED_GRID:
        with fitting(eta):
            for run in check_serving(_as_text(rows)):
                if run.error is not None:
                    table.setdefault(run.id, []).append(math.log1p(run.error))
    return {i: e for i, e in table.items() if len(e) == len(ROUTED_GRID)}


def _read(errors: list[float], log_eta: float) -> float:
    """A row's log error at ``log_eta``, on the line between the grid's nearest two."""
    logs = [math.log(v) for v in ROUTED_GRID]
    x = min(max(log_eta, logs[0]), logs[-1])
    j = min(max(bisect.bisect_right(logs, x) - 1, 0), len(logs) - 2)
    t = (x - logs[j]) / (logs[j + 1] - logs[j])
    return errors[j] + t * (errors[j + 1] - errors[j])


def _expert_size(model: str) -> float:
    from whichgpu.estimate.routed_experts import expert_gemm_size
    from whichgpu.models import resolve_model

    return expert_gemm_size(resolve_model(model))


def fit_routed(rows: list[dict[str, str]], table: dict[str, list[float]]) -> tuple[float, float]:
    """The law ``log η_r = min(0, c + b·ln(S / S₀))`` (:func:`~whichgpu.estimate.
    routed_experts.routed_efficiency`) whose ``(η₀ = e^c, b)`` minimise the squared log
    errors of ``rows`` (an MoE's throughput runs), each source's runs of a model weighted by
    one over their count so that each model a publication measured counts once: every slope
    of :data:`ROUTED_SLOPES`, and for each the level by golden-section search (the estimate
    slows monotonically as ``η_r`` falls)."""
    from whichgpu.estimate.routed_experts import REFERENCE_GEMM_SIZE

    ids = [row["id"] for row in rows if row["id"] in table]
    model_of = {row["id"]: row["model"] for row in rows}
    group_of = {row["id"]: (row["source"], row["model"]) for row in rows}
    per_group = Counter(group_of[i] for i in ids)
    size = {m: math.log(_expert_size(m) / REFERENCE_GEMM_SIZE) for m in model_of.values()}

    def cost(c: float, b: float) -> float:
        return sum(_read(table[i], min(0.0, c + b * size[model_of[i]])) ** 2
                   / per_group[group_of[i]] for i in ids)  # fmt: skip

    best = (math.inf, 0.0, 0.0)
    ratio = (math.sqrt(5) - 1) / 2
    for b in ROUTED_SLOPES if len(set(model_of.values())) > 1 else (0.0,):
        low, high = math.log(ROUTED_GRID[0]), 0.0
        for _ in range(30):
            a, z = high - ratio * (high - low), low + ratio * (high - low)
            if cost(a, b) <= cost(z, b):
                high = z
            else:
                low = a
        c = (low + high) / 2
        best = min(best, (cost(c, b), c, b))
    return math.exp(best[1]), best[2]


def _held_key(rows: list[dict[str, str]]) -> str:
    """What a run is held out by: its source where the runs come from more sources than a
    law of two numbers needs, else its model (one publication's models, one at a time)."""
    return "source" if len({row["source"] for row in rows}) > MIN_SOURCES else "model"


def routed_held_out(
    text: str, engine: str, table: dict[str, list[float]] | None = None
) -> dict[str, float]:
    """Each of ``engine``'s MoE throughput runs' error (estimate over measurement, minus 1)
    planned at the routed experts' law the others fit (:func:`fit_routed`), leaving out its
    source, or its model where the runs come from too few sources (:func:`_held_key`): the
    test of whether the law carries to what it has not seen. Empty where there are too few
    of either to test a law of two numbers. ``table``: the runs' :func:`_routed_table`,
    where the caller planned it already."""
    from whichgpu.estimate.routed_experts import REFERENCE_GEMM_SIZE

    rows = _moe_max_rows(text, engine)
    key = _held_key(rows)
    groups = sorted({row[key] for row in rows})
    if len(groups) <= MIN_SOURCES:
        return {}
    table = _routed_table(rows) if table is None else table
    out: dict[str, float] = {}
    for group in groups:
        eta0, b = fit_routed([row for row in rows if row[key] != group], table)
        for row in rows:
            if row[key] == group and row["id"] in table:
                size = _expert_size(row["model"]) / REFERENCE_GEMM_SIZE
                c = math.log(eta0) + b * math.log(size)
                out[row["id"]] = math.expm1(_read(table[row["id"]], min(0.0, c)))
    return out


def fit_routed_efficiency(text: str, engine: str) -> tuple[float, float, int, float, float] | None:
    """``engine``'s routed experts' law (``η₀``, ``b``: :func:`fit_routed`) fitted on its
    MoE throughput runs in the CSV ``text``, how many there are, and the 10th and 90th
    percentiles of their held-out errors (:func:`routed_held_out`); None where there are too
    few to test it, or where the runs held out read no better than at ``η_r`` = 1 (a law
    that does not carry is not the kernels')."""
    from accuracy.published_runs import _percentile

    rows = _moe_max_rows(text, engine)
    table = _routed_table(rows) if rows else {}
    held_out = routed_held_out(text, engine, table)
    if not held_out:
        return None
    at_one = [math.expm1(e[-1]) for e in table.values()]
    if statistics.median(map(abs, held_out.values())) >= statistics.median(map(abs, at_one)):
        return None
    eta0, b = fit_routed(rows, table)
    errors = sorted(held_out.values())
    return eta0, b, len(table), _percentile(errors, 0.1), _percentile(errors, 0.9)


def early_build_spread(text: str) -> tuple[float, float, int]:
    """The 10th and 90th percentiles of the errors of the early engine builds' runs in the
    CSV ``text`` (validation/published_serving_early.csv), each as a rate's (the estimate
    over the measurement, less one; a latency's inverted), planned at the release each ran
    and today's kernels, and how many there are: how far a build whose MLA kernels no other
    run measured may fall behind (:func:`~whichgpu.estimate.efficiency_model.
    early_build_band`). Nothing is fitted: the runs' errors are the range."""
    from accuracy.published_runs import _percentile

    errors = sorted(
        run.error if run.metric.endswith("tokens_per_s") else 1 / (1 + run.error) - 1
        for run in check_serving(text)
        if run.error is not None
    )
    return _percentile(errors, 0.1), _percentile(errors, 0.9), len(errors)
