"""whichgpu against published training runs it was not fitted on (validation/
published_training.csv): single-GPU fine-tunes as torchtune, PEFT and lit-gpt publish them,
and 3D-parallel pretraining as NeMo, Megatron-Bridge and the Llama 3 paper do.

Each row is estimated as its source ran it: the framework's recipe (``framework``), then the
settings the source states (precision, optimizer, micro-batch, accumulation, sequence,
recomputation, LoRA rank and targets, the layout ``tp × pp × dp``, and the context-parallel
degree of an ``extra`` flag ``cpN``: the row's ``dp`` counts the context-parallel ranks, as
the per-GPU work is the same). The roofline's efficiencies are not fitted on these rows, so their
errors are out of sample (the fit's own leave-one-out and leave-one-GPU-out are in
docs/perf-accuracy.md), except for a framework's speed factor (:func:`fit_factors`), fitted
on that framework's rows here, whose figure is therefore given leave-one-source-out.
"""

from __future__ import annotations

import csv
import io
import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RunCheck:
    id: str
    kind: str
    source: str
    framework: str
    memory_error: float | None = None
    rate_error: float | None = None
    estimated_gib: float | None = None
    measured_gib: float | None = None
    estimated_rate: float | None = None
    measured_rate: float | None = None
    #: Why whichgpu cannot estimate the row as published (an uneven pipeline split), or ""
    excluded: str = ""
    #: The published rate's model FLOPs utilisation, in whichgpu's FLOPs per token for the
    #: job as configured (PaLM's 6N + attention, 4N for LoRA, + the recomputed forward) over
    #: the GPU's dense tensor peak: a published figure near or above 1 does not describe the
    #: stated settings
    implied_mfu: float | None = None
    #: The GPU's architecture (Ampere, Hopper...), for the docs' per-generation reading
    architecture: str = ""
    #: The source's own maintainers could not reproduce its memory figure (the row's
    #: ``memory_disputed``): shown, and kept out of the memory statistic
    memory_disputed: bool = False
    #: The run's batches were padded to their longest example (its ``padded`` flag): an
    #: unpacked dataset, counted in real tokens
    padded: bool = False

    @property
    def group(self) -> str:
        """The factor that applies to the run and is fitted on it: an unpacked fine-tune's
        padding (:data:`~whichgpu.estimate.efficiency_model.PADDED_FACTOR`; the HF Trainer
        itself runs at the roofline's speed on full sequences, measured here), else its
        framework's."""
        from whichgpu.estimate.efficiency_model import PADDED_FACTOR

        return PADDED_FACTOR if self.padded else self.framework


def validation_runs(root: Path) -> list[RunCheck]:
    """:func:`check_runs` over the repository's ``validation/published_training.csv``, with
    the architectures in ``validation/models/`` (the scripts that fit and document it)."""
    models = root / "validation" / "models"
    configs = {path.stem: path.read_text("utf-8") for path in sorted(models.glob("*.json"))}
    return check_runs((root / "validation" / "published_training.csv").read_text("utf-8"), configs)


def measured_trainer_runs(text: str) -> list[RunCheck]:
    """:func:`check_runs` over ``validation/measured_trainer.csv`` (the HF Trainer timed on one
    GPU by ``validation/measure_trainer.py``: BF16 weights, AdamW, no checkpointing or
    accumulation, PEFT's default LoRA targets), one check a row, in its order."""
    import csv
    import io

    from whichgpu.models import resolve_model

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id", "kind", "framework", "model", "task", "gpu", "gpus", "tp", "pp", "dp",
                     "precision", "optimizer", "batch", "grad_accum", "seq", "checkpointing",
                     "lora_rank", "lora_targets", "memory_gib", "tokens_per_s_per_gpu",
                     "source"])  # fmt: skip
    for i, r in enumerate(csv.DictReader(io.StringIO(text))):
        lora = r["method"] == "lora"
        writer.writerow([
            f"m{i}", "finetune", "hf", resolve_model(r["model"]).id, "lora" if lora else "finetune",
            r["gpu"].removeprefix("NVIDIA "), 1, 1, 1, 1, "bf16-true", "adamw", r["batch"], 1,
            r["seq"], "none", r["lora_rank"], "q_proj,v_proj" if lora else "", r["peak_gib"],
            r["tokens_per_s"], "whichgpu",
        ])  # fmt: skip
    return check_runs(out.getvalue())


def check_runs(text: str, configs: Mapping[str, str] | None = None) -> list[RunCheck]:
    """Estimate every row of the CSV ``text`` and compare. A row's ``model`` is a preset or
    a key of ``configs`` (the text of a ``config.json``: the architectures a paper states,
    such as Megatron's GPT sizes, kept beside the runs in validation/models/)."""
    from whichgpu.catalog import load_catalog
    from whichgpu.errors import InvalidInput
    from whichgpu.estimate.compile_speed import compile_speedup
    from whichgpu.estimate.memory import estimate_memory
    from whichgpu.estimate.parallel import check_layout
    from whichgpu.estimate.perf import tensor_tflops, train_flops_per_token
    from whichgpu.estimate.throughput import estimate_throughput
    from whichgpu.inputs.job_input import make_job
    from whichgpu.models import arch_from_config_text, resolve_model
    from whichgpu.units import BYTES_PER_GIB

    catalog = load_catalog()
    out = []
    for row in csv.DictReader(io.StringIO(text)):
        extra = set(filter(None, (row.get("extra") or "").split(";")))
        gpus = int(row["gpus"])
        fields: dict[str, object] = {
            "framework": row["framework"] or None,
            "task": row["task"],
            "precision": row["precision"] or None,
            "optimizer": row["optimizer"] or None,
            "batch": int(row["batch"]),
            "grad_accum": int(row["grad_accum"]),
            "seq": int(row["seq"]),
            "checkpointing": row["checkpointing"] or None,
            "lora_rank": int(row["lora_rank"]) if row["lora_rank"] else None,
            "lora_targets": row["lora_targets"] or None,
            "tp": int(row["tp"]),
            "pp": int(row["pp"]),
            "gpus": gpus,
            "zero": 1 if gpus > 1 and row["framework"] in ("megatron", "nemo") else None,
        }
        # a flag the run set, or (no_<flag>) one it turned off where the recipe sets it
        for flag in ("chunked_loss", "optimizer_in_backward", "activation_offload"):
            if flag in extra or f"no_{flag}" in extra:
                fields[flag] = flag in extra
        if "compile" in extra:
            fields["compiled"] = True
        for flag in extra:  # ZeRO stage as the run used it (zero3: FSDP full shard)
            if flag.startswith("zero") and flag[4:].isdigit():
                fields["zero"] = int(flag[4:])
        if "offload_params" in extra:  # FSDP CPUOffload(offload_params=True)
            fields["offload"] = "all"
        for flag in extra:
            if flag.startswith("rl") and flag[2:].isdigit():  # recompute_num_layers (block)
                fields["recompute_layers"] = int(flag[2:])
            if flag.startswith("vp") and flag[2:].isdigit():  # Megatron's interleaving
                fields["vp"] = int(flag[2:])
            if flag.startswith("cp") and flag[2:].isdigit():  # context parallelism: the
                # row's dp counts its ranks (the per-GPU work the same), its replicas are
                # cp times fewer and each accumulates cp times the micro-batches
                fields["cp"] = int(flag[2:])
                fields["grad_accum"] = int(row["grad_accum"]) * int(flag[2:])
        if "eager" in extra:
            fields["attention"] = "eager"
        # estimated as full sequences: the padding's factor is fitted on the padded rows
        fields["packing"] = True
        job = make_job(**fields)
        model = row["model"]
        arch = (
            arch_from_config_text(configs[model], f"validation/models/{model}.json")
            if configs and model in configs
            else resolve_model(model)
        )
        try:
            check_layout(arch, job)
        except InvalidInput as err:
            out.append(
                RunCheck(row["id"], row["kind"], row["source"], row["framework"], excluded=str(err))
            )
            continue
        gpu = catalog.resolve(row["gpu"])
        memory_error = estimated_gib = measured_gib = None
        if row["memory_gib"]:
            estimate = estimate_memory(arch, job)
            estimated_gib = estimate.tensor_bytes / BYTES_PER_GIB
            measured_gib = float(row["memory_gib"])
            memory_error = estimated_gib / measured_gib - 1
        rate_error = estimated_rate = measured_rate = implied_mfu = None
        if row["tokens_per_s_per_gpu"]:
            # without the framework's fitted factor: what the factors are fitted on
            estimated_rate = estimate_throughput(arch, job, gpu, gpus).throughput.value / gpus
            if job.compiled:  # compile's speed-up as fitted without this framework's pairs
                estimated_rate *= compile_speedup(arch, row["framework"]) / compile_speedup(arch)
            measured_rate = float(row["tokens_per_s_per_gpu"])
            rate_error = estimated_rate / measured_rate - 1
            peak = tensor_tflops(gpu, job.math_precision) * 1e12
            implied_mfu = (
                measured_rate * train_flops_per_token(arch, job, job.seq, recomputed=True) / peak
            )
        out.append(
            RunCheck(
                row["id"],
                row["kind"],
                row["source"],
                row["framework"],
                memory_error,
                rate_error,
                estimated_gib,
                measured_gib,
                estimated_rate,
                measured_rate,
                implied_mfu=implied_mfu,
                architecture=gpu.architecture,
                memory_disputed="memory_disputed" in extra,
                padded="padded" in extra,
            )
        )
    return out


def spread(errors: list[float]) -> tuple[float, float]:
    """Median and 90th percentile of the absolute errors."""
    values = sorted(abs(e) for e in errors)
    if not values:
        return 0.0, 0.0
    p90 = values[min(len(values) - 1, max(0, round(0.9 * len(values) + 0.5) - 1))]
    return statistics.median(values), p90


#: A published rate whose model FLOPs utilisation exceeds this does not describe its stated
#: settings (no framework sustains it on one GPU): such rows are shown, not fitted on.
PLAUSIBLE_MFU = 0.70
#: A framework's factor is fitted only where its runs come from this many sources, so that
#: leaving one out still leaves a fit to check it with.
MIN_SOURCES = 2


def _fittable(run: RunCheck) -> bool:
    return (
        bool(run.group) and run.rate_error is not None and (run.implied_mfu or 0.0) <= PLAUSIBLE_MFU
    )


def fit_factors(
    runs: list[RunCheck], min_sources: int = MIN_SOURCES
) -> dict[str, tuple[float, int]]:
    """Per framework (and for padded batches: :attr:`RunCheck.group`), the geometric mean of
    published over estimated tokens/s (a speed factor for what the roofline's harness does
    not capture: fused kernels, overlapped communication, padding) and the runs it rests
    on; only groups with runs from ``min_sources`` sources, and, where they come from
    :data:`MIN_SOURCES` or more, only factors that predict each source's runs, fitted on
    the others, better than no factor (:func:`predicts`): a factor that does not carry from
    one publication to the next is not a property of the framework."""
    out = _geometric_factors(runs, min_sources)
    return {
        framework: factor
        for framework, factor in out.items()
        if _sources(runs, framework) < MIN_SOURCES or predicts(runs, framework)
    }


def _fittable_of(runs: list[RunCheck], framework: str) -> list[RunCheck]:
    return [r for r in filter(_fittable, runs) if r.group == framework]


def _sources(runs: list[RunCheck], framework: str) -> int:
    return len({r.source for r in _fittable_of(runs, framework)})


def _geometric_factors(runs: list[RunCheck], min_sources: int) -> dict[str, tuple[float, int]]:
    by_framework: dict[str, list[RunCheck]] = {}
    for run in filter(_fittable, runs):
        by_framework.setdefault(run.group, []).append(run)
    out = {}
    for framework, rows in sorted(by_framework.items()):
        if len({r.source for r in rows}) < min_sources:
            continue
        logs = [-math.log1p(r.rate_error or 0.0) for r in rows]
        out[framework] = (math.exp(sum(logs) / len(logs)), len(rows))
    return out


def predicts(runs: list[RunCheck], framework: str) -> bool:
    """Whether ``framework``'s factor, fitted on the other sources' runs, predicts each
    source's runs better than no factor (the median absolute tokens/s error, over the
    framework's runs)."""
    rows = _fittable_of(runs, framework)
    with_fit, without = [], []
    for run in rows:
        others = [r for r in runs if r.source != run.source]
        factor = _geometric_factors(others, 1).get(framework)
        if factor is not None and run.rate_error is not None:
            with_fit.append(abs(with_factor(run, factor[0]) or 0.0))
            without.append(abs(run.rate_error))
    return bool(with_fit) and statistics.median(with_fit) < statistics.median(without)


def with_factor(run: RunCheck, factor: float) -> float | None:
    """The run's tokens/s error once its estimate is multiplied by ``factor``."""
    if run.rate_error is None:
        return None
    return (1 + run.rate_error) * factor - 1


def leave_one_source_out(runs: list[RunCheck]) -> dict[str, float]:
    """Each fittable run's error with its framework's factor fitted, and kept or not
    (:func:`fit_factors`), on the other sources' runs only (none where no other source has
    the framework's runs)."""
    out = {}
    for run in filter(_fittable, runs):
        others = [r for r in runs if r.source != run.source]
        factor = fit_factors(others, min_sources=MIN_SOURCES - 1).get(run.group)
        error = with_factor(run, factor[0]) if factor else run.rate_error
        if error is not None:
            out[run.id] = error
    return out


def fit_architecture_factors(
    runs: list[RunCheck], current: Mapping[str, float], inherited: frozenset[str]
) -> dict[str, tuple[float, int, float, float]]:
    """Per GPU architecture whose LLM training step the efficiency fit has no run of
    (``inherited``: its factor comes from CNN and BERT benchmarks, or a predecessor), a
    speed factor from the published LLM training runs on it: the geometric mean of
    published over estimated tokens/s, the estimates taken without the factor (``current``,
    the one the catalog holds now, divided out). Kept where the runs come from
    :data:`MIN_SOURCES` sources and the factor fitted on the other sources predicts each
    source's runs better than none, as :func:`fit_factors` holds a framework's; with the
    10th and 90th percentiles of those leave-one-source-out errors, the range an estimate
    that rests on it states. A Volta run reads what a Volta LLM step reaches of the
    architecture's peak (no FlashAttention-2, whose kernels need sm80: NVIDIA V100's
    published GPT runs reach 12 to 39 % model FLOPs utilisation), not what its CNN
    benchmarks' small kernels do."""
    out: dict[str, tuple[float, int, float, float]] = {}
    by_arch: dict[str, list[tuple[str, float]]] = {}
    for run in filter(_fittable, runs):
        if run.architecture in inherited and run.rate_error is not None:
            ratio = (1 + run.rate_error) / current.get(
                run.architecture, 1.0
            )  # estimate / published
            by_arch.setdefault(run.architecture, []).append((run.source, -math.log(ratio)))
    for arch, rows in sorted(by_arch.items()):
        sources = {source for source, _log in rows}
        if len(sources) < MIN_SOURCES:
            continue
        held: list[float] = []
        without: list[float] = []
        for source, log in rows:
            others = [x for s, x in rows if s != source]
            factor = math.exp(sum(others) / len(others))
            held.append(math.exp(-log) * factor - 1)  # the estimate's error, factored
            without.append(math.exp(-log) - 1)
        if statistics.median(map(abs, held)) >= statistics.median(map(abs, without)):
            continue
        mean = sum(x for _s, x in rows) / len(rows)
        ordered = sorted(held)
        low, high = _percentile(ordered, 0.1), _percentile(ordered, 0.9)
        out[arch] = (math.exp(mean), len(rows), low, high)
    return out


def _percentile(ordered: list[float], q: float) -> float:
    """The ``q`` quantile of ``ordered`` by linear interpolation (numpy's default)."""
    at = q * (len(ordered) - 1)
    below = math.floor(at)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (at - below)


#: How a run's id names the precision of a same-layout pair (``…-bf16``, ``…-fp8``)
PAIR_SUFFIXES = ("-bf16", "-fp8")


def fp8_pairs(runs: list[RunCheck]) -> list[tuple[RunCheck, RunCheck]]:
    """The (BF16, FP8) runs one source measured on one model, GPU count and layout: ids
    that differ only in their :data:`PAIR_SUFFIXES`."""
    by_id = {r.id: r for r in runs if r.rate_error is not None and r.estimated_rate}
    out = []
    for run_id, run in sorted(by_id.items()):
        if run_id.endswith("-bf16") and (fp8 := by_id.get(run_id[:-5] + "-fp8")) is not None:
            out.append((run, fp8))
    return out


def fit_fp8_factor(
    runs: list[RunCheck], current: float
) -> tuple[float, int, list[float], list[float]] | None:
    """FP8 training's speed over the roofline's, from the published runs that measure one
    layout in both BF16 and FP8 (:func:`fp8_pairs`): the geometric mean of published over
    estimated FP8/BF16 ratios, the estimates taken without the factor (``current``, the one
    the catalog holds, divided out). The ratio cancels what the two runs share (the
    framework, the layout, the communication): what is left is what FP8 GEMMs reach of
    their doubled peak in a training step, with the casts and scalings they add
    (Micikevicius et al., 2022, "FP8 Formats for Deep Learning", §4). Kept where the pairs
    come from :data:`MIN_SOURCES` sources and, fitted on the other sources, the factor
    predicts each source's ratios better than none; with those leave-one-source-out errors
    of the ratio and the errors without it."""
    rows = []
    for bf16, fp8 in fp8_pairs(runs):
        published = (fp8.measured_rate or 0.0) / (bf16.measured_rate or 1.0)
        estimated = (fp8.estimated_rate or 0.0) / current / (bf16.estimated_rate or 1.0)
        rows.append((fp8.source, math.log(published / estimated)))
    if len({source for source, _log in rows}) < MIN_SOURCES:
        return None
    held, without = [], []
    for source, log in rows:
        others = [x for s, x in rows if s != source]
        held.append(math.exp(sum(others) / len(others) - log) - 1)  # estimated / published
        without.append(math.exp(-log) - 1)
    if statistics.median(map(abs, held)) >= statistics.median(map(abs, without)):
        return None
    return math.exp(sum(x for _s, x in rows) / len(rows)), len(rows), held, without
