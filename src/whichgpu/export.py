"""``whichgpu export``: a recommendation's pick as a SkyPilot task, a Kubernetes manifest or
a Slurm batch header, so that it is one command away from running. Pure text builders.

* SkyPilot task YAML (docs.skypilot.co, "YAML configuration"): ``resources.accelerators``
  ``NAME:COUNT`` with SkyPilot's accelerator names (``catalog/data/aliases.csv``, scope
  ``skypilot``), ``num_nodes`` when the count exceeds one 8-GPU node, ``use_spot`` for spot.
* Kubernetes (the NVIDIA device plugin's extended resources): ``nvidia.com/gpu: N`` for whole
  cards, ``nvidia.com/mig-1g.10gb: 1`` for a MIG slice (``mixed`` strategy); a ``batch/v1``
  Job for jobs with a size, an ``apps/v1`` Deployment (one replica per service) for serving.
* Slurm: ``#SBATCH --nodes``, ``--gres=gpu:N`` per node and ``--time`` from the high end of
  the time estimate (the range's slow end, so the job is not killed early).

A training pick also carries the configuration whichgpu chose (micro-batch, accumulation,
recomputation, layout) as the framework's own command-line settings
(:func:`launch_arguments`), in the environment variable ``WHICHGPU_LAUNCH_ARGS`` of every
format, and a comment saying so; a run command that names ``$WHICHGPU_LAUNCH_ARGS`` passes
them on (the default one does).
"""

from __future__ import annotations

import math
import shlex
from typing import TYPE_CHECKING, Any

from whichgpu.catalog.store import Catalog
from whichgpu.errors import InvalidInput
from whichgpu.recommender.engine import Option, Recommendation

if TYPE_CHECKING:
    from whichgpu.job import Job

FORMATS = ("skypilot", "kubernetes", "slurm")
#: The environment variable the exports set to the launch arguments.
LAUNCH_ARGS_ENV = "WHICHGPU_LAUNCH_ARGS"
#: GPUs per node: HGX/DGX baseboards and the usual PCIe servers hold 8.
GPUS_PER_NODE = 8


def skypilot_name(catalog: Catalog, gpu_id: str) -> str:
    names = [a.alias for a in catalog.aliases if a.scope == "skypilot" and a.gpu == gpu_id]
    if not names:
        known = sorted({a.gpu for a in catalog.aliases if a.scope == "skypilot"})
        raise InvalidInput("skypilot_name", gpu=gpu_id, known=", ".join(known))
    return names[0]


def _nodes(option: Option) -> tuple[int, int]:
    """(nodes, GPUs per node) for the pick's cards: one node per isolated service, else as
    few 8-GPU nodes as hold the count."""
    hw = option.hardware
    if hw.services > 1 and hw.count <= GPUS_PER_NODE:
        return hw.services, hw.count
    gpus = option.gpus
    if gpus <= GPUS_PER_NODE:
        return 1, gpus
    return math.ceil(gpus / GPUS_PER_NODE), GPUS_PER_NODE


def _slow_hours(option: Option) -> float | None:
    """The time at the slow end of each component's throughput range (hours of use are
    fixed: they do not stretch)."""
    if option.time_s is None:
        return None
    seconds = 0.0
    for run in option.runs:
        if run.time_s is None:
            return None
        fixed = run.component.hours is not None
        if not fixed and run.throughput and run.throughput_low:
            seconds += run.time_s * run.throughput / run.throughput_low
        else:
            seconds += run.time_s
    return seconds / 3600


def _summary(result: Recommendation, option: Option) -> str:
    from whichgpu.recommender.reasons import hw_text

    parts = [f"whichgpu pick for {result.workload.name or 'this workload'}: {hw_text(option)}"]
    if option.time_s is not None:
        parts.append(f"about {option.time_s / 3600:.1f} h")
    if option.cost_usd is not None:
        parts.append(f"about ${option.cost_usd:,.2f} ({option.market})")
    return ", ".join(parts)


def launch_arguments(framework: str | None, job: Job) -> str:
    """``job``'s micro-batch, accumulation, recomputation and layout in the framework's own
    settings: the HF Trainer's ``TrainingArguments`` flags (also TRL, DeepSpeed and FSDP
    through Accelerate, and without a framework), torchtune's ``key=value`` config overrides,
    Axolotl's ``--key=value``, LLaMA-Factory's ``key=value``, torchtitan's
    ``--section.key value`` and Megatron-LM's flags (megatron/training/arguments.py)."""
    b, m, ckpt = job.batch, job.grad_accum, job.checkpointing
    global_batch = b * m * job.dp
    on = ckpt != "none"
    if framework == "torchtune":
        parts = [f"batch_size={b}", f"gradient_accumulation_steps={m}",
                 f"enable_activation_checkpointing={on}"]  # fmt: skip
        if job.compiled:
            parts.append("compile=True")
    elif framework == "axolotl":
        parts = [f"--micro_batch_size={b}", f"--gradient_accumulation_steps={m}",
                 f"--gradient_checkpointing={str(on).lower()}"]  # fmt: skip
    elif framework == "llama-factory":
        parts = [f"per_device_train_batch_size={b}", f"gradient_accumulation_steps={m}",
                 f"disable_gradient_checkpointing={str(not on).lower()}"]  # fmt: skip
    elif framework == "torchtitan":
        parts = [f"--training.local_batch_size {b}", f"--training.global_batch_size {global_batch}",
                 f"--parallelism.tensor_parallel_degree {job.tp}",
                 f"--parallelism.pipeline_parallel_degree {job.pp}",
                 f"--activation_checkpoint.mode {ckpt}"]  # fmt: skip
    elif framework == "megatron":
        parts = [f"--micro-batch-size {b}", f"--global-batch-size {global_batch}",
                 f"--tensor-model-parallel-size {job.tp}",
                 f"--pipeline-model-parallel-size {job.pp}"]  # fmt: skip
        if job.vp > 1:  # the interleaved schedule
            parts.append(f"--num-virtual-stages-per-pipeline-rank {job.vp}")
        if on:
            parts.append(f"--recompute-granularity {ckpt}")
        if job.zero >= 1:
            parts.append("--use-distributed-optimizer")
        if job.tp_overlap and job.tp > 1:  # Transformer Engine's userbuffers
            parts.append("--tp-comm-overlap")
    elif framework == "nemo":  # NeMo-Run overrides of a recipe (nemo llm pretrain --factory)
        strategy = "trainer.strategy."
        parts = [f"data.micro_batch_size={b}", f"data.global_batch_size={global_batch}",
                 f"{strategy}tensor_model_parallel_size={job.tp}",
                 f"{strategy}pipeline_model_parallel_size={job.pp}"]  # fmt: skip
        if job.vp > 1:
            parts.append(f"{strategy}virtual_pipeline_model_parallel_size={job.vp}")
        if job.tp > 1:
            parts.append(f"{strategy}sequence_parallel=True")
        if on:
            parts.append(f"model.config.recompute_granularity={ckpt}")
    else:
        parts = [f"--per_device_train_batch_size {b}", f"--gradient_accumulation_steps {m}"]
        if on:
            parts.append("--gradient_checkpointing")
        if job.compiled:
            parts.append("--torch_compile")
    return " ".join(parts)


def _training_settings(result: Recommendation, option: Option) -> tuple[str, str] | None:
    """The pick's first training component: a comment describing its configuration, and its
    launch arguments."""
    for run in option.runs:
        job = run.job
        if job is None or not job.training:
            continue
        args = launch_arguments(run.component.framework, job)
        comment = (
            f"training {run.component.label}: {run.strategy}, micro-batch {job.batch} × "
            f"{job.grad_accum} accumulated (global batch {job.batch * job.grad_accum * job.dp}), "
            f"recomputation {job.checkpointing}; ${LAUNCH_ARGS_ENV}: {args}"
        )
        return comment, args
    return None


#: The default run command of a training pick: the script, given the chosen settings.
TRAIN_COMMAND = f"python train.py ${LAUNCH_ARGS_ENV}"
#: The default container image of a training pick (a served pick takes its engine's)
TRAIN_IMAGE = "nvcr.io/nvidia/pytorch:24.10-py3"
#: How each engine's command line asks for FP8 weights (the others take quantized checkpoints)
QUANT_FLAGS = {"vllm": " --quantization fp8", "sglang": " --quantization fp8",
               "tgi": " --quantize fp8"}  # fmt: skip


def serving_command(option: Option) -> tuple[str, str] | None:
    """The pick's first served model: a comment on its plan, and the engine's launch command
    for one replica (:data:`whichgpu.engines.ENGINES` ``launch``)."""
    from whichgpu.engines import ENGINES
    from whichgpu.models.presets import presets

    for run in option.runs:
        plan, job = run.serving, run.job
        if plan is None or job is None:
            continue
        engine = ENGINES[plan.engine]
        component = run.component
        preset = presets().get(component.model or "")
        model = preset.hf_id if preset is not None and preset.hf_id else component.model or ""
        quant = QUANT_FLAGS.get(engine.id, "") if job.quant == "fp8" else ""
        command = engine.launch.format(
            model=model,
            tp=plan.gpus_per_replica,
            max_len=job.prompt + max(job.generate, 1),
            sequences=plan.max_sequences,
            quant=quant,
        )
        point = plan.operating
        comment = (
            f"serving {component.label}: {engine.name}, {plan.replicas} × "
            f"{plan.gpus_per_replica}-GPU replica{'' if plan.replicas == 1 else 's'}, "
            f"{point.rate_rps:.2f} requests/s each with "
            f"{math.ceil(point.concurrency)} in flight (TTFT {point.ttft_s * 1e3:.0f} ms, "
            f"{point.tpot_s * 1e3:.1f} ms per output token, {component.percentile})"
        )
        return comment, command
    return None


def _dump(doc: dict[str, Any]) -> str:
    """YAML as a person writes it: no ``&id001`` anchors for repeated values, UTF-8 text
    (``×``, not ``\\xD7``)."""
    import yaml

    class Plain(yaml.SafeDumper):
        def ignore_aliases(self, data: Any) -> bool:
            return True

    return yaml.dump(
        doc, Dumper=Plain, sort_keys=False, default_flow_style=False, allow_unicode=True
    )


#: A Kubernetes object name (and a Slurm job name we write): an RFC 1123 label.
_NAME = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"


def check_export_args(name: str, run: str | None) -> None:
    """The job's name is an RFC 1123 label (what the Kubernetes API server accepts: at most
    63 characters of a-z, 0-9 and '-', alphanumeric at both ends); a command to run is not
    empty. One line, with the closest valid name."""
    import re

    if not re.match(_NAME, name):
        slug = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")[:63].strip("-") or "job"
        raise InvalidInput("bad_job_name", field=("name",), value=name, suggestion=slug)
    if run is not None and not run.strip():
        raise InvalidInput("empty_run", field=("run",))


def skypilot_task(
    catalog: Catalog,
    result: Recommendation,
    option: Option,
    name: str,
    run: str,
    setup: str | None = None,
) -> str:
    if option.hardware.mig is not None:
        raise InvalidInput("skypilot_mig")
    nodes, per_node = _nodes(option)
    resources: dict[str, Any] = {
        "accelerators": f"{skypilot_name(catalog, option.gpu.id)}:{per_node}"
    }
    if option.market == "spot":
        resources["use_spot"] = True
    doc: dict[str, Any] = {"name": name, "resources": resources, "num_nodes": nodes}
    training = _training_settings(result, option)
    if training is not None:
        doc["envs"] = {LAUNCH_ARGS_ENV: training[1]}
    if setup:
        doc["setup"] = setup
    doc["run"] = run
    header = f"# {_summary(result, option)}\n"
    slow = _slow_hours(option)
    if slow is not None and option.time_s is not None:
        expected = option.time_s / 3600
        header += f"# estimated hours: {expected:.1f} (up to {slow:.1f})\n"
    if training is not None:
        header += f"# {training[0]}\n"
    serving = serving_command(option)
    if serving is not None:
        header += f"# {serving[0]}\n"
    return header + _dump(doc)


def kubernetes_manifest(
    result: Recommendation, option: Option, name: str, run: str, image: str
) -> str:
    hw = option.hardware
    if hw.mig is not None:
        limits = {f"nvidia.com/mig-{hw.mig.profile}": 1}
        replicas = hw.services
    else:
        if hw.count > GPUS_PER_NODE:
            raise InvalidInput("kubernetes_nodes", n=option.gpus)
        limits = {"nvidia.com/gpu": hw.count}
        replicas = hw.services  # one pod per isolated service, each with its own GPUs
        plan = next((r.serving for r in option.runs if r.serving is not None), None)
        if plan is not None and hw.services == 1:
            # one pod per serving replica, each with the GPUs of its tensor-parallel group
            limits = {"nvidia.com/gpu": plan.gpus_per_replica}
            replicas = plan.replicas
    container: dict[str, Any] = {
        "name": "main",
        "image": image,
        "command": ["/bin/sh", "-c", run],
        "resources": {"limits": limits},
    }
    annotations = {"whichgpu/pick": _summary(result, option)}
    serving = serving_command(option)
    if serving is not None:
        annotations["whichgpu/serving"] = serving[0]
    training = _training_settings(result, option)
    if training is not None:
        container["env"] = [{"name": LAUNCH_ARGS_ENV, "value": training[1]}]
        annotations["whichgpu/training"] = training[0]
    serves = option.time_s is None or all(
        r.component.kind == "inference" and r.component.hours is not None for r in option.runs
    )
    labels = {"app": name}
    if serves:
        doc: dict[str, Any] = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "labels": labels, "annotations": annotations},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": labels},
                "template": {"metadata": {"labels": labels}, "spec": {"containers": [container]}},
            },
        }
    else:
        doc = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": name, "labels": labels, "annotations": annotations},
            "spec": {
                "backoffLimit": 0,
                "parallelism": replicas,
                "completions": replicas,
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {"restartPolicy": "Never", "containers": [container]},
                },
            },
        }
    return _dump(doc)


def slurm_header(result: Recommendation, option: Option, name: str, run: str) -> str:
    if option.hardware.mig is not None:
        raise InvalidInput("slurm_mig")
    nodes, per_node = _nodes(option)
    lines = [
        "#!/bin/bash",
        f"# {_summary(result, option)}",
        f"# GPU: {option.gpu.name}; a site may name its GRES type: --gres=gpu:TYPE:{per_node}",
        f"#SBATCH --job-name={name}",
        f"#SBATCH --nodes={nodes}",
        f"#SBATCH --gres=gpu:{per_node}",
        "#SBATCH --ntasks-per-node=1",
    ]
    slow = _slow_hours(option)
    if slow is not None:
        minutes = math.ceil(slow * 60)
        lines.append(
            f"#SBATCH --time={minutes // 1440}-{minutes % 1440 // 60:02d}:{minutes % 60:02d}:00"
        )
    training = _training_settings(result, option)
    if training is not None:
        lines += ["", f"# {training[0]}", f"export {LAUNCH_ARGS_ENV}={shlex.quote(training[1])}"]
    serving = serving_command(option)
    if serving is not None:
        lines += ["", f"# {serving[0]}"]
    lines += ["", run, ""]
    return "\n".join(lines)


def export(
    catalog: Catalog,
    result: Recommendation,
    kind: str,
    name: str,
    run: str | None,
    image: str | None,
    setup: str | None = None,
) -> str:
    """``result``'s pick in ``kind``'s format, running ``run`` in ``image`` (None: for a
    served model, the serving engine's launch command and image; else :data:`TRAIN_COMMAND`
    in :data:`TRAIN_IMAGE`)."""
    from whichgpu.engines import ENGINES

    check_export_args(name, run)
    option = result.pick
    if option is None:
        raise InvalidInput("nothing_to_export")
    serving = serving_command(option)
    if run is None:
        run = serving[1] if serving is not None else TRAIN_COMMAND
    if image is None:
        plan = next((r.serving for r in option.runs if r.serving is not None), None)
        image = ENGINES[plan.engine].image if plan is not None else TRAIN_IMAGE
    if kind == "skypilot":
        return skypilot_task(catalog, result, option, name, run, setup)
    if kind == "kubernetes":
        return kubernetes_manifest(result, option, name, run, image)
    if kind == "slurm":
        return slurm_header(result, option, name, run)
    from whichgpu.inputs import closest

    raise InvalidInput(
        "unknown_value",
        field=("export",),
        value=kind,
        valid=", ".join(FORMATS),
        hint=closest(kind, FORMATS) or "",
    )
