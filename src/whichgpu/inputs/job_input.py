"""A :class:`~whichgpu.job.Job` from what a user typed: each field checked by the rule the
request types declare for it (:class:`~whichgpu.inputs.requests.FitRequest`'s), a framework's
recipe filling what was left open, the global batch turned into accumulation steps."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from whichgpu.errors import InvalidInput, Ref
from whichgpu.i18n import N_
from whichgpu.inputs import Input
from whichgpu.inputs.request_fields import GLOBAL_BATCH, GRAD_ACCUM
from whichgpu.inputs.requests import IMAGE_FIELDS, FitRequest
from whichgpu.job import TASKS, Job, build_job
from whichgpu.job.recipes import RECIPES

if TYPE_CHECKING:
    from whichgpu.models.arch import ModelArch


def job_inputs() -> dict[str, Input]:
    """The rules of every user-settable :class:`~whichgpu.workload.Job` field (a
    :class:`FitRequest`'s; ``checkpointing`` is the recomputation mode)."""
    from whichgpu.inputs import specs

    rules = {s.name: s.input for s in specs(FitRequest)}
    rules["checkpointing"] = rules.pop("recompute")
    rules["task"] = Input("choice", N_("inference, train, finetune, lora or qlora."), choices=TASKS)
    for name in ("model", "params", "gpu", "gpu_memory_utilization", *IMAGE_FIELDS):
        del rules[name]
    rules["grad_accum"] = GRAD_ACCUM  # set by the library (recipes, the published runs)
    return rules


#: Job fields a framework's recipe sets and a request does not: how the framework builds
#: its model and its engine keeps its logits
RECIPE_ONLY = ("all_logits", "adapters_fp32", "logits_fp32", "kbit_saves_inputs", "loss_fusion")


def make_job(**fields: object) -> Job:
    """A :class:`Job` from user input, validated with the request types' field rules (those
    of :class:`FitRequest`); bad input is one :class:`InvalidInput`."""
    from whichgpu.inputs import check_keys, value_of

    inputs = job_inputs()
    check_keys(fields, [*inputs, *RECIPE_ONLY])
    framework = fields.get("framework")
    if framework is not None:
        framework = value_of(inputs["framework"], framework, ("framework",))
        task = fields.get("task") or "inference"
        if task != "inference":
            recipe = RECIPES[str(framework)].defaults(str(task))
            fields = {**fields, **{k: v for k, v in recipe.items() if fields.get(k) is None}}
    values: dict[str, object] = {}
    global_batch = fields.get("global_batch")
    for key, value in fields.items():
        if value is None or key in ("framework", "global_batch"):
            continue
        if key in RECIPE_ONLY:
            if not isinstance(value, bool):
                raise InvalidInput("not_bool", field=(key,), value=value)
            values[key] = value
        else:
            values[key] = value_of(inputs[key], value, (key,))
    if values.get("recompute_layers") is not None and fields.get("task") == "inference":
        raise InvalidInput("recompute_layers_inference", field=("recompute_layers",))
    if values.get("recompute_layers") is not None and framework not in ("megatron", "nemo"):
        raise InvalidInput("recompute_layers_framework", field=("recompute_layers",),
                           framework=Ref(("framework",)))  # fmt: skip
    if values.get("recompute_layers") is not None:  # a block of layers: full recomputation
        mode = values.setdefault("checkpointing", "full")
        if mode != "full":
            raise InvalidInput("recompute_layers_mode", field=("recompute_layers",), mode=mode)
    job = build_job(**values)
    if global_batch is not None and job.training:
        job = with_global_batch(job, int(value_of(GLOBAL_BATCH, global_batch, ("global_batch",))))
    if job.gpus % (job.tp * job.pp * job.cp):
        raise InvalidInput(
            "gpus_multiple",
            field=("gpus",),
            gpus=job.gpus,
            n=job.tp * job.pp * job.cp,
            tp=Ref(("tp",)),
            pp=Ref(("pp",)),
            cp=Ref(("cp",)),
        )
    if job.cp > 1 and (job.task == "inference" or job.seq % (2 * job.cp)):
        raise InvalidInput("cp_sequence", field=("cp",), cp=job.cp, seq=job.seq,
                           split=2 * job.cp)  # fmt: skip
    if job.quantize_on == "gpu" and not job.quantised:
        raise InvalidInput("quantize_on_without_quant", field=("quantize_on",),
                           quant=Ref(("quant",)))  # fmt: skip
    if job.task == "inference" and job.memory_format is not None:
        raise InvalidInput("memory_format_inference", field=("memory_format",))
    if job.task == "inference" and job.zero:
        raise InvalidInput("zero_inference", field=("zero",), tp=Ref(("tp",)))
    if job.task == "inference" and job.pp > 1:
        raise InvalidInput("pp_inference", field=("pp",), tp=Ref(("tp",)))
    return job


def check_asked(arch: ModelArch, job: Job) -> None:
    """What the model refuses of the settings asked, whatever the GPU: a block of recomputed
    layers past a pipeline rank's (:func:`~whichgpu.estimate.parallel.check_recompute_block`),
    a memory layout for a model with no convolutions."""
    from whichgpu.estimate.parallel import check_recompute_block

    check_recompute_block(arch, job)
    if job.memory_format is not None and arch.kind != "cnn":
        raise InvalidInput("memory_format_not_cnn", field=("memory_format",), model=arch.name)


def with_global_batch(job: Job, global_batch: int) -> Job:
    """``job`` accumulating gradients to ``global_batch`` sequences (or images) a step: the
    micro-batch times the data-parallel degree must divide it."""
    per_step = job.batch * job.dp
    if global_batch % per_step:
        raise InvalidInput(
            "global_batch_split",
            field=("global_batch",),
            global_batch=global_batch,
            batch=job.batch,
            dp=job.dp,
            per_step=per_step,
        )
    return replace(job, grad_accum=global_batch // per_step)
