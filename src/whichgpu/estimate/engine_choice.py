"""Which engine serves a model where the user names none: each engine built to serve at load
planned on the same GPUs (:func:`~whichgpu.estimate.serving_plan.plan_service`, the job as
that engine serves it: :meth:`~whichgpu.job.engines.EngineProfile.served_job`), the one that
serves the most requests a second under the targets kept, and the next one named.

The engines searched are the ones a team serving traffic deploys (continuous batching over
a paged KV cache, tensor parallelism inside a node) whose speed rests on their own published
runs: TensorRT-LLM, on which the serving roofline is calibrated, and the engines with a host
time fitted on theirs (vLLM, SGLang: :func:`~whichgpu.job.engine_times.load_sequence_times`). TGI,
with nothing of its own fitted, would run at TensorRT-LLM's speed for want of data, not on
it: it is planned when named, as Hugging Face ``generate()`` is. GGUF weights are the
llama.cpp server's and Ollama's."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING

from whichgpu.frozen import evolve
from whichgpu.job.engine_releases import engine_profile
from whichgpu.job.engine_times import load_sequence_times, timed
from whichgpu.job.engines import (
    ENGINES,
    GGUF_FORMATS,
    REFERENCE_ENGINE,
    EngineProfile,
)

if TYPE_CHECKING:
    from whichgpu.catalog.records import GPU
    from whichgpu.estimate.serving_types import ServingPlan, Targets
    from whichgpu.job import Job
    from whichgpu.models.arch import ModelArch
    from whichgpu.notes import Note

#: The engines that may be searched where none is named, in the order a tie keeps (the most
#: deployed first); those with a speed of their own (:func:`searched`) are
SERVING_ENGINES = ("vllm", "sglang", "trtllm", "tgi")
#: The engines searched for GGUF weights (the formats only they run)
GGUF_SEARCHED = ("llama.cpp", "ollama")


def searched(quant: str | None) -> tuple[str, ...]:
    """The engines the search plans for ``quant`` weights: the llama.cpp server and Ollama
    for GGUF; otherwise the serving engines whose speed rests on their own runs."""
    if quant in GGUF_FORMATS:
        return GGUF_SEARCHED
    fitted = load_sequence_times()
    return tuple(e for e in SERVING_ENGINES if e == REFERENCE_ENGINE or e in fitted)


def candidate_engines(
    engine_id: str | None, gpu: GPU, quant: str | None, kv_dtype: str = "auto"
) -> list[EngineProfile]:
    """The engine named, or the searched engines that run ``quant`` weights on ``gpu``
    (:meth:`~whichgpu.job.engines.EngineProfile.gap`); where none of them runs the format at
    all (bitsandbytes NF4), the engines that do (TGI, then ``generate()``)."""
    if engine_id is not None:
        return [engine_profile(engine_id)]
    names = tuple(n for n in searched(quant) if ENGINES[n].keeps_kv(kv_dtype))
    if quant is not None and not any(quant in ENGINES[name].formats for name in names):
        names = tuple(e.id for e in ENGINES.values()
                      if quant in e.formats and e.keeps_kv(kv_dtype))  # fmt: skip
    return [
        engine
        for name in names
        if (engine := ENGINES[name]).gap(gpu, quant) is None
        and (quant is None or quant in engine.formats)
    ]


def engines_for(
    engine_id: str | None, gpu: GPU, job: Job
) -> tuple[list[EngineProfile], EngineProfile]:
    """The engines to plan ``job`` on (:func:`candidate_engines`), and the one an answer
    names where none of them runs on ``gpu`` (the engine named, else the most deployed)."""
    from whichgpu.job.engines import DEFAULT_ENGINE

    engines = candidate_engines(engine_id, gpu, job.quant, job.kv_dtype)
    return engines, engines[0] if engines else ENGINES[DEFAULT_ENGINE]


@dataclass(frozen=True)
class EngineChoice:
    engine: EngineProfile
    #: The job as the engine serves it (its KV cache's dtype)
    job: Job
    plan: ServingPlan
    #: The engine next best, the requests/s it serves on the same GPUs, and how that is
    #: known: "planned" under the targets, "bound" (the most it serves at maximum load) or
    #: "unmet" (it meets a target at no load)
    runner_up: tuple[str, float, str] | None = None
    #: The engines compared, in the order a tie keeps
    compared: tuple[str, ...] = ()


#: Where every engine meets the targets, one later in the search's order (vLLM, SGLang,
#: TensorRT-LLM) is chosen only where it serves this much more per place it stands behind:
#: vLLM runs a Hub checkpoint as it is, TensorRT-LLM wants its own quantized checkpoints and
#: a narrower set of models, and a few percent is within what the host-time fit tells apart
#: (the vLLM and SGLang runs' leave-one-source-out errors, docs/serving-accuracy.md)
PREFERENCE_MARGIN = 0.05


def choose_engine(
    arch: ModelArch,
    job: Job,
    gpu: GPU,
    count: int,
    engines: list[EngineProfile],
    targets: Targets,
    demand_rps: float | None = None,
    max_sequences: int | None = None,
    tp: int | None = None,
    layout: str | None = None,
) -> EngineChoice | None:
    """Each of ``engines`` planned on ``count`` × ``gpu``; the one that serves the most kept,
    an engine later in ``engines`` by :data:`PREFERENCE_MARGIN` a place (where none meets
    the targets, the nearest to them: :func:`~whichgpu.estimate.serving_plan.serves_more`),
    or None where none holds the model. The engines are planned in the order of their
    maximum-load bound (:func:`~whichgpu.estimate.serving_plan.max_load_rps`, which no
    target raises); one whose bound cannot beat the best so far is not planned, and where it
    comes next its bound is what the answer names. ``layout``: the user's (``aggregated``,
    ``disaggregated``: the engines that run separate workers only), else chosen."""
    from whichgpu.estimate.serving_plan import max_load_rps, plan_service, serves_more

    def weight(engine: EngineProfile) -> float:
        return float((1 + PREFERENCE_MARGIN) ** -engines.index(engine))

    def meets(rps: float) -> bool:  # the demand, where one is given
        return demand_rps is None or rps >= demand_rps * (1 - 1e-9)

    def better(a: EngineChoice, b: EngineChoice) -> bool:
        if a.plan.unmet is not None or b.plan.unmet is not None:
            return serves_more(a.plan, b.plan)
        if meets(_served(a)) != meets(_served(b)):  # the demand met first, then the margin
            return meets(_served(a))
        if _served(a) * weight(a.engine) == _served(b) * weight(b.engine):
            return engines.index(a.engine) < engines.index(b.engine)
        return _served(a) * weight(a.engine) > _served(b) * weight(b.engine)

    if len(engines) == 1:  # the engine named: nothing to compare
        bounds = {engines[0].id: 1.0}
    else:
        bounds = {
            e.id: max_load_rps(arch, e.served_job(job), gpu, count, e, max_sequences, tp)
            for e in engines
        }
    order = sorted(
        (e for e in engines if bounds[e.id] > 0), key=lambda e: -bounds[e.id] * weight(e)
    )
    best: EngineChoice | None = None
    # name, requests/s, "planned"/"held"/"bound"/"unmet" ("held": planned, its targets held
    # at the slow end of a range an unmeasured factor widens)
    others: list[tuple[str, float, str]] = []
    wider: set[str] = set()  # the engines whose targets were held so
    for engine in order:
        bound = bounds[engine.id]
        if (
            best is not None
            and best.plan.unmet is None
            and bound * weight(engine) < _served(best) * weight(best.engine)
            and (meets(_served(best)) or not meets(bound))
        ):
            others.append((engine.name, bound, "bound"))
            continue
        served = engine.served_job(job)
        held = targets  # at the slow end of the engine's own range, where that is wider
        if targets.margin > 1.0 and targets.any:
            widening = unmeasured_widening(engine, arch, gpu, served.speculative)
            held = replace(targets, margin=targets.margin * widening)
            if widening > 1.0:
                wider.add(engine.id)
        plan = plan_service(arch, served, gpu, count, engine, held, demand_rps,
                            max_sequences, tp, layout_lows(engine, arch, gpu, served),
                            split_low(engine, arch, gpu, served), layout)  # fmt: skip
        if plan is None:
            continue
        chosen = plan.attention_dp and plan.disaggregated is None
        if chosen != served.attention_dp:  # the layout the search chose
            served = evolve(served, attention_dp=chosen)
        choice = EngineChoice(engine, served, plan)
        if best is None or better(choice, best):
            best, choice = choice, best
        if choice is not None:
            missed = choice.plan.unmet is not None
            kind = "unmet" if missed else "held" if choice.engine.id in wider else "planned"
            others.append((choice.engine.name, _served(choice), kind))
    if best is None or not others:
        return best
    if best.engine.id in wider:  # held so as well: nothing to tell them apart by
        others = [(n, r, "planned" if k == "held" else k) for n, r, k in others]
    # the next engine: one that serves under the targets, else one that meets them at no load
    runner_up = max(others, key=lambda o: (o[2] != "unmet", o[1]))
    compared = tuple(e.name for e in engines)
    return EngineChoice(best.engine, best.job, best.plan, runner_up, compared)


def _served(choice: EngineChoice) -> float:
    return choice.plan.served_rps


def engine_notes(component: str, choice: EngineChoice, asked: Job) -> tuple[Note, ...]:
    """What the search chose and said nothing of otherwise: the engine, where others were
    planned (the next one and what it serves), and the KV cache's dtype the engine took
    from the checkpoint (:meth:`~whichgpu.job.engines.EngineProfile.kv_note`)."""
    from whichgpu.errors import Ref
    from whichgpu.notes import note

    out = list(choice.engine.kv_note(component, asked, choice.job))
    if choice.runner_up is not None:
        other, other_rps, known = choice.runner_up
        plan = choice.plan
        code = {"planned": "chosen_engine", "held": "chosen_engine_held",
                "bound": "chosen_engine_bound"}.get(known, "chosen_engine_unmet")  # fmt: skip
        out.insert(
            0,
            note(
                code,
                component=component,
                engine=choice.engine.labelled,
                rate=round(plan.served_rps, 2),
                other=other,
                other_rate=round(other_rps, 2),
                order=", ".join(choice.compared),
                margin=round(100 * PREFERENCE_MARGIN),
                engine_field=Ref(("engine",)),
            ),
        )
    return tuple(out)


def tight_kv_notes(
    component: str, arch: ModelArch, gpu: GPU, choice: EngineChoice
) -> tuple[Note, ...]:
    """A warning where the engine's KV-cache pool is under
    :data:`~whichgpu.estimate.assumptions.TIGHT_KV_SHARE` of the replica's memory: the
    sequences it holds, and so the throughput, then rest on buffers that change between the
    engine's releases."""
    from whichgpu.estimate.assumptions import TIGHT_KV_SHARE
    from whichgpu.estimate.kv_pool import kv_pool_share
    from whichgpu.notes import note
    from whichgpu.units import BYTES_PER_GIB

    plan, job = choice.plan, choice.job
    pool, share = kv_pool_share(arch, job, gpu, plan.gpus_per_replica, choice.engine)
    if share >= TIGHT_KV_SHARE:
        return ()
    eight_bit = job.kv_dtype == "fp8"  # already 8-bit: more GPUs are what is left
    return (
        note(
            "warn_tight_kv_8bit" if eight_bit else "warn_tight_kv",
            component=component,
            engine=choice.engine.name,
            gpus=plan.gpus_per_replica,
            gpu=gpu.name,
            pool_gib=round(pool / BYTES_PER_GIB, 1),
            share=round(share, 3),
            sequences=plan.max_sequences,
            tokens=job.prompt + max(job.generate, 1),
        ),
    )


def check_serving(
    arch: ModelArch, job: Job, engine_id: str | None, layout: str | None = None
) -> None:
    """A served request must fit the model's context, and the engine named must run its
    weight format (and separate prefill and decode workers, where ``layout`` asks for them):
    one clear error naming what would (the engines that run it). With none named, the
    search takes the engines that run it (every format has one)."""
    from whichgpu.errors import InvalidInput, Ref
    from whichgpu.job import check_context

    check_context(arch, job)  # a served job is an inference job
    runs = [e for e in ENGINES.values() if job.quant is None or job.quant in e.formats]
    keep = [e.id for e in runs if e.keeps_kv(job.kv_dtype)]
    if not keep:  # GGUF weights and an FP8 cache: no engine has both
        raise InvalidInput("kv_dtype_format", field=("kv_dtype",), kv=job.kv_dtype,
                           quant=job.quant, engines=", ".join(e.name for e in runs))  # fmt: skip
    if layout == "disaggregated" and engine_id is None and not any(e.disaggregation for e in runs):
        raise InvalidInput("layout_format", field=("layout",), quant=job.quant,
                           engines=", ".join(e.name for e in runs),
                           quant_field=Ref(("quant",)), layout_field=Ref(("layout",)))  # fmt: skip
    if engine_id is None:
        return
    engine = engine_profile(engine_id)
    if job.quant is not None and job.quant not in engine.formats:
        able = [e.id for e in ENGINES.values() if job.quant in e.formats]
        raise InvalidInput(
            "engine_format",
            field=("quant",),
            engine=engine.name,
            quant=job.quant,
            valid=", ".join(sorted(engine.formats)),
            instead=", ".join(able) or "-",
        )
    if not engine.keeps_kv(job.kv_dtype):
        raise InvalidInput("engine_kv_dtype", field=("kv_dtype",), engine=engine.name,
                           kv=job.kv_dtype, instead=", ".join(keep))  # fmt: skip
    if job.speculative is not None and job.speculative not in engine.speculative:
        able = [e.name for e in ENGINES.values() if job.speculative in e.speculative]
        raise InvalidInput("engine_speculative", field=("speculative",), engine=engine.name,
                           method=job.speculative, instead=", ".join(able))  # fmt: skip
    if layout == "disaggregated" and not engine.disaggregation:
        able = [e.name for e in ENGINES.values() if e.disaggregation]
        raise InvalidInput("engine_layout", field=("layout",), engine=engine.name,
                           instead=", ".join(able))  # fmt: skip


#: The harnesses whose serving calibration holds runs of a mixture-of-experts model, with
#: the share of its experts each such model routes a token to, ``top_k / E``
#: (``catalog/data/benchmarks.csv``: TensorRT-LLM's Mixtral 8x7B rows, 2 of 8; a test keeps
#: this in step with the data). Another engine borrows its harness's η and fits only its
#: host time, on dense runs: its MoE kernels were never measured.
MOE_CALIBRATED_SHARES: dict[str, tuple[float, ...]] = {"trtllm": (2 / 8,)}
#: How far a model's expert share may sit from a calibrated one and count as measured: the
#: share sets how many tokens each expert's GEMM gets at a batch (``B·k/E``), so a model
#: routing a token to a 32nd of its experts (DeepSeek-V3's 8 of 256) runs its grouped GEMMs
#: at an 8th of the rows Mixtral's 2 of 8 give them at the same batch, a regime no run of
#: the efficiency fit measured: TensorRT-LLM's routed GEMMs run at the law its own post-v1.0
#: MoE tables fit (:mod:`whichgpu.estimate.routed_experts`), whose models left out one at a
#: time read -26 % to +43 % (framework_efficiency.csv), and the range stays widened
MOE_SHARE_REACH = 2.0


def moe_measured(harness: str, arch: ModelArch) -> bool:
    """Whether ``harness``'s serving calibration measured an MoE whose expert share
    (``top_k / E``) lies within :data:`MOE_SHARE_REACH` of ``arch``'s."""
    share = arch.experts_per_token / arch.n_experts
    return any(1 / MOE_SHARE_REACH <= share / held <= MOE_SHARE_REACH
               for held in MOE_CALIBRATED_SHARES.get(harness, ()))  # fmt: skip


def layout_lows(engine: EngineProfile, arch: ModelArch, gpu: GPU, job: Job) -> tuple[float, float]:
    """What a replica's capacity is held to in each layout, tensor parallelism's and
    data-parallel attention's: the low end of its likely range where it rests on an
    unmeasured factor (:func:`serving_provenance`), as the plan's capacity is held where it
    is stated (:mod:`whichgpu.plan.core`), else 1."""
    if not arch.is_moe:
        return 1.0, 1.0
    return _held(engine, arch, gpu, job, False), _held(engine, arch, gpu, job, True)


def split_low(engine: EngineProfile, arch: ModelArch, gpu: GPU, job: Job) -> float:
    """What separate prefill and decode workers' capacity is held to against the replicas
    of the same GPUs: the low end of the likely range the split's provenance states
    (:data:`~whichgpu.estimate.efficiency_model.NO_DISAGGREGATED_RUN`) over the replicas'
    own, so that the split wins only by more than its wider range (1 for an engine that
    does not disaggregate)."""
    if not engine.disaggregation:
        return 1.0
    return _held(engine, arch, gpu, job, False, True) / _held(engine, arch, gpu, job, False)


def _held(engine: EngineProfile, arch: ModelArch, gpu: GPU, job: Job, attention_dp: bool,
          disaggregated: bool = False) -> float:  # fmt: skip
    from whichgpu.estimate.latency_range import held_share

    return held_share(serving_provenance(engine, arch, gpu, job.speculative, attention_dp,
                                         disaggregated))  # fmt: skip


def unmeasured_widening(
    engine: EngineProfile, arch: ModelArch, gpu: GPU, speculative: str | None = None
) -> float:
    """How much further the slow end of a served rate's likely range lies where it rests on
    an unmeasured factor (:func:`serving_provenance`) than the serving fit's own band puts
    it: the ratio of the two low ends (1 where nothing is unmeasured; the provenance is
    cached, as serve_component states the same one again)."""
    from whichgpu.estimate.throughput import likely_rate

    said = serving_provenance(engine, arch, gpu, speculative)
    own = likely_rate(1.0, "tokens/s", "llm-serve", said)
    return likely_rate(1.0, "tokens/s", "llm-serve").low / own.low


@lru_cache(maxsize=4096)
def serving_provenance(engine: EngineProfile, arch: ModelArch | None = None,
                       gpu: GPU | None = None, speculative: str | None = None,
                       attention_dp: bool = False, disaggregated: bool = False) -> str:  # fmt: skip
    """What the served rate rests on: the measurements its harness's serving η is fitted on
    (llama.cpp's on decode steps), the engine's host time per sequence where one is fitted
    on its own published runs (:func:`~whichgpu.job.engine_times.load_sequence_times`); and, said
    in the terms :func:`~whichgpu.estimate.efficiency_model.extrapolated` reads, where it
    rests on a factor no serving run measured: ``gpu``'s architecture served by no run of
    the harness (another work's factor, a predecessor's, none), or ``arch``'s experts on an
    engine whose own runs hold no mixture of experts, or none routing a token to a like share
    of its experts (:func:`moe_measured`), or
    a speculative decoder's gain, which no serving run of the fit measured
    (docs/serving-accuracy.md compares it with published speed-ups), or data-parallel
    attention (``attention_dp``), a layout no calibration run ran, or separate prefill and
    decode workers (``disaggregated``), which none ran either, or an engine release whose
    MLA kernels predate every measured build (:attr:`~whichgpu.job.engines.EngineProfile.
    early_mla`); last, the engine release
    whose defaults the plan reads (:attr:`~whichgpu.job.engines.EngineProfile.version`)."""
    from whichgpu.estimate.collectives import LAYER_SPLIT_HARNESSES
    from whichgpu.estimate.efficiency import SERVE_FAMILY, memory_class
    from whichgpu.estimate.efficiency_model import (
        EARLY_MLA_BUILD,
        NO_ATTENTION_DP_RUN,
        NO_DISAGGREGATED_RUN,
        NO_MOE_SERVING_RUN,
        NO_SPECULATIVE_RUN,
        load_efficiency,
    )

    model, _spread = load_efficiency()
    harness = engine.harness
    regime = "llm-decode" if harness in LAYER_SPLIT_HARNESSES else "llm-serve"
    out = f"fitted on {model.fitted_on.get(f'{harness}|{regime}', 0)} measurements"
    timed_at = timed(engine.id)
    if timed_at is not None and timed_at[0] > 0:
        out += (
            f"; + {timed_at[0] * 1e6:.0f} µs a running sequence a step for {engine.name}, "
            f"fitted on {timed_at[1]} published runs"
        )
    elif timed_at is not None:  # checked on its runs: no time carried from one to the next
        out += (
            f"; no host time a sequence carries across {engine.name}'s {timed_at[1]} "
            "published runs: none assumed"
        )
    if gpu is not None:  # the compute factor's own provenance, past its η's
        family = SERVE_FAMILY if regime == "llm-serve" else ""
        _eta, said = model.efficiency(
            (harness, regime), f"{family}{gpu.architecture}", memory=memory_class(gpu)
        )
        out += "".join(f"; {part}" for part in said.split("; ")[1:])
    if arch is not None and arch.is_moe and engine.id != harness:
        out += f"; {NO_MOE_SERVING_RUN} of {engine.name}: its experts' kernels taken as dense"
    elif arch is not None and arch.is_moe and not moe_measured(harness, arch):
        out += (
            f"; {NO_MOE_SERVING_RUN} of {engine.name} routing a token to "
            f"{arch.experts_per_token} of {arch.n_experts} experts: its routed GEMMs at the "
            "law its own MoE runs fit"
        )
    if speculative is not None:
        out += f"; {NO_SPECULATIVE_RUN} ({speculative})"
    if attention_dp:
        out += f"; {NO_ATTENTION_DP_RUN} of {engine.name}: its exchange and batches as planned"
    if disaggregated:
        out += (f"; {NO_DISAGGREGATED_RUN} of {engine.name}: its workers timed on the "
                "replicas' curves, which published comparisons read far off")  # fmt: skip
    if engine.early_mla and arch is not None and arch.attention == "mla":
        out += (f"; {EARLY_MLA_BUILD}: {engine.labelled} timed at today's kernels, "
                "its range the early builds' published runs")  # fmt: skip
    return out + f"; {engine.labelled}'s defaults"
