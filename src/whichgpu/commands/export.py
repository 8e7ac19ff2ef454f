"""``whichgpu export``: a recommendation's pick as a SkyPilot task, a Kubernetes manifest or
a Slurm batch header, so that it is one command away from running. Pure text builders.

* SkyPilot task YAML (docs.skypilot.co, "YAML configuration"): ``resources.accelerators``
  ``NAME:COUNT`` with SkyPilot's accelerator names (``catalog/data/aliases.csv``, scope
  ``skypilot``), ``num_nodes`` when the count exceeds one instance of the shape the pick's
  offers sell (8 GPUs where it has none), ``use_spot`` for spot.
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
from whichgpu.commands.export_images import GPU_RESOURCE, HF_TOKEN_SECRET, pick_image
from whichgpu.commands.recommend.rank import Option, Recommendation
from whichgpu.commands.serve_launch import (
    MODEL_ENV,
    node_script,
    nodes_of,
    pod_command,
    readiness_probe,
    replicas_a_node,
    served_of,
    serving_command,
)
from whichgpu.commands.train_launch import (
    LAUNCH_ARGS_ENV,
    TRAIN_COMMAND,
    launch_arguments,
    train_launch,
    trainer_zero,
    zero_config_text,
)
from whichgpu.errors import InvalidInput

if TYPE_CHECKING:
    pass

FORMATS = ("skypilot", "kubernetes", "slurm", "dynamo", "llm-d")


def skypilot_names(catalog: Catalog, gpu_id: str) -> list[str]:
    """SkyPilot's accelerator names for ``gpu_id`` (``aliases.csv``, scope ``skypilot``)."""
    return [a.alias for a in catalog.aliases if a.scope == "skypilot" and a.gpu == gpu_id]


def skypilot_accelerators(catalog: Catalog, result: Recommendation, option: Option) -> str:
    """``option``'s ``resources.accelerators``: SkyPilot's name for its GPU and the GPUs a
    node. A GPU whose SkyPilot name whichgpu does not carry is refused in one line naming
    the best-ranked option it does name (and its accelerators), never a guessed name that
    SkyPilot would reject at launch."""
    per_node = nodes_of(option)[1]
    names = skypilot_names(catalog, option.gpu.id)
    if names:
        return f"{names[0]}:{per_node}"
    for other in result.options:
        if not other.feasible or other.hardware.mig is not None:
            continue
        other_names = skypilot_names(catalog, other.gpu.id)
        if other_names:
            from whichgpu.commands.recommend.options import hw_text

            raise InvalidInput(
                "skypilot_name",
                gpu=option.gpu.name,
                option=hw_text(other),
                accelerators=f"{other_names[0]}:{nodes_of(other)[1]}",
            )
    raise InvalidInput("skypilot_no_name", gpu=option.gpu.name)


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
    from whichgpu.commands.recommend.options import hw_text

    parts = [f"whichgpu pick for {result.workload.name or 'this workload'}: {hw_text(option)}"]
    if option.time_s is not None:
        parts.append(f"about {option.time_s / 3600:.1f} h")
    if option.cost_usd is not None:
        parts.append(f"about ${option.cost_usd:,.2f} ({option.market})")
    return ", ".join(parts)


def _training_settings(result: Recommendation, option: Option) -> tuple[str, str] | None:
    """The pick's first training component: a comment describing its configuration, and its
    launch arguments."""
    for run in option.runs:
        job = run.job
        if job is None or not job.training:
            continue
        args = launch_arguments(run.component.framework, job)
        comment = (
            f"{run.component.label}: {run.strategy}, micro-batch {job.batch} × "
            f"{job.grad_accum} accumulated (global batch {job.batch * job.grad_accum * job.dp}), "
            f"recomputation {job.checkpointing}"
            + (
                f" (the first {job.recompute_layers} layers of each chunk)"
                if job.checkpointing == "full" and job.recompute_layers
                else ""
            )
            + (f", activations {job.memory_format}" if job.memory_format else "")
            + f"; ${LAUNCH_ARGS_ENV}: {args}"
            + (
                f" (--deepspeed: {zero_config_text(job)}, base64-encoded)"
                if trainer_zero(run.component.framework, job)
                else ""
            )
        )
        return comment, args
    return None


def _dump(doc: dict[str, Any]) -> str:
    """YAML as a person writes it: no ``&id001`` anchors for repeated values, UTF-8 text
    (``×``, not ``\\xD7``), a script of several lines as a block."""
    import yaml

    class Plain(yaml.SafeDumper):
        def ignore_aliases(self, data: Any) -> bool:
            return True

    def text(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
        """A script of several lines as a literal block (``|``), line for line."""
        style = "|" if "\n" in data else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)

    Plain.add_representer(str, text)
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
    port: int | None = None,
) -> str:
    if option.hardware.mig is not None:
        raise InvalidInput("skypilot_mig")
    nodes = nodes_of(option)[0]
    resources: dict[str, Any] = {"accelerators": skypilot_accelerators(catalog, result, option)}
    if option.market == "spot":
        resources["use_spot"] = True
    doc: dict[str, Any] = {"name": name, "resources": resources, "num_nodes": nodes}
    service = None if port is None else _skyserve(option, nodes)
    if service is not None and port is not None:  # replicas behind SkyServe's endpoint
        doc = {"name": name, "service": service, "resources": resources}
        resources["ports"] = port
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
    if service is not None:
        header += (f"# a SkyServe service: sky serve up this file; its endpoint spreads the "
                   f"requests over the {nodes} replicas, each on its own instance\n")  # fmt: skip
    # SkyPilot's docs, "Environment Variables and Secrets": --secret passes a value of the
    # user's shell to the task (a secret the YAML marked null would be required of an open
    # model too)
    header += "".join(f"# {line}\n" for line in _token_line(option, "--secret HF_TOKEN"))
    return header + _dump(doc)


def _token_line(option: Option, how: str) -> list[str]:
    """What a pick that downloads a model from the Hub says of a gated one's token, ``how``
    the export passes it (nothing where no component names a model)."""
    if not any(r.component.model for r in option.runs):
        return []
    return [f"a gated Hub model (Llama, Gemma) downloads with your token: {how}"]


def _skyserve(option: Option, nodes: int) -> dict[str, Any] | None:
    """A served pick whose replicas each hold one instance of their own, several of them (a
    row of 1-GPU VMs): a SkyServe ``service`` section (SkyPilot's docs, "Serving Models" and
    "Service YAML": ``readiness_probe`` and ``replicas``; the ``resources`` describe each
    replica), where a multi-node task would start the servers with nothing in front of them;
    None otherwise (one instance, several replicas a node, a replica spanning nodes, separate
    prefill and decode workers)."""
    served = served_of(option)
    if served is None or nodes < 2:
        return None
    run, plan = served[0], served[1]
    if run.serving is not None and run.serving.disaggregated is not None:
        return None
    if replicas_a_node(option, plan) != 1 or plan.replicas != nodes:
        return None
    return {"readiness_probe": readiness_probe(plan.engine), "replicas": nodes}


def kubernetes_manifest(
    result: Recommendation, option: Option, name: str, run: str, image: str, port: int | None = None
) -> str:
    hw = option.hardware
    pod_gpus = 1
    if hw.mig is not None:
        limits = {f"nvidia.com/mig-{hw.mig.profile}": 1}
        replicas = hw.services
    else:
        resource = GPU_RESOURCE.get(hw.gpu.vendor, "nvidia.com/gpu")
        pod_gpus, replicas = hw.count, hw.services  # a pod per isolated service
        plan = next((r.serving for r in option.runs if r.serving is not None), None)
        if plan is not None and hw.services == 1:
            # one pod per serving replica, each with the GPUs of its tensor-parallel group
            pod_gpus, replicas = plan.gpus_per_replica, plan.replicas
        if pod_gpus > nodes_of(option)[1]:  # a pod holds the GPUs of one instance
            raise InvalidInput("kubernetes_nodes", n=option.gpus)
        limits = {resource: pod_gpus}
    container: dict[str, Any] = {
        "name": "main",
        "image": image,
        "command": ["/bin/sh", "-c", run],
        "resources": {"limits": limits},
    }
    annotations = {"whichgpu/pick": _summary(result, option)}
    serving = serving_command(option, pods=True)
    if serving is not None:
        annotations["whichgpu/serving"] = serving[0]
    env: list[dict[str, Any]] = []
    if any(r.component.model for r in option.runs):
        # a gated Hub model (Llama, Gemma) downloads with the user's token: from the Secret
        # the Dynamo and llm-d exports name, optional so that an open model runs without it
        # (Kubernetes docs, "Distribute Credentials Securely Using Secrets": env valueFrom
        # secretKeyRef, optional); huggingface_hub reads HF_TOKEN
        env.append({"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {
            "name": HF_TOKEN_SECRET, "key": "HF_TOKEN", "optional": True}}})  # fmt: skip
    training = _training_settings(result, option)
    if training is not None:
        env.append({"name": LAUNCH_ARGS_ENV, "value": training[1]})
        annotations["whichgpu/training"] = training[0]
    if env:
        container["env"] = env
    pod: dict[str, Any] = {"containers": [container]}
    if pod_gpus > 1:
        # the GPUs of one pod talk through shared memory (NCCL's SHM transport; vLLM's
        # tensor-parallel workers), which a container gets 64 MiB of unless a memory-backed
        # volume is mounted there (vLLM docs, "Using Kubernetes": the shm emptyDir)
        container["volumeMounts"] = [{"name": "shm", "mountPath": "/dev/shm"}]
        pod["volumes"] = [{"name": "shm", "emptyDir": {"medium": "Memory"}}]
    serves = option.time_s is None or all(
        r.component.kind == "inference" and r.component.hours is not None for r in option.runs
    )
    labels = {"app": name}
    served = served_of(option)
    if serves and port is not None and served is not None:
        # the engine's port (what a Service in front of the replicas targets: `kubectl expose
        # deployment NAME --port PORT`), each pod taken into it once its engine answers
        # (Kubernetes docs, "Configure Liveness, Readiness and Startup Probes": a failing
        # readiness probe keeps the pod out of the Service's endpoints and restarts nothing,
        # as a model's minutes of loading need)
        container["ports"] = [{"name": "http", "containerPort": port}]
        container["readinessProbe"] = {
            "httpGet": {"path": readiness_probe(served[1].engine), "port": "http"},
            "periodSeconds": 10,
        }
    if serves:
        doc: dict[str, Any] = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "labels": labels, "annotations": annotations},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": labels},
                "template": {"metadata": {"labels": labels}, "spec": pod},
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
                    "spec": {"restartPolicy": "Never", **pod},
                },
            },
        }
    return _dump(doc)


def slurm_header(result: Recommendation, option: Option, name: str, run: str) -> str:
    if option.hardware.mig is not None:
        raise InvalidInput("slurm_mig")
    nodes, per_node = nodes_of(option)
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
    # sbatch passes the submitting shell's environment to the job (--export=ALL, its
    # default: Slurm's sbatch manual)
    lines += [f"# {line}" for line in _token_line(option, "export HF_TOKEN before sbatch")]
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

    check_export_args(name, run)
    option = result.pick
    if option is None:
        raise InvalidInput("nothing_to_export")
    served = served_of(option)
    if served is not None and kind in ("skypilot", "slurm", "kubernetes"):
        per_node = nodes_of(option)[1]
        if served[1].gpus_per_replica > per_node:  # a replica over several instances
            raise InvalidInput("export_replica_spans", gpus=served[1].gpus_per_replica,
                               per_node=per_node)  # fmt: skip
    host_run = pod_run = run or TRAIN_COMMAND
    if run is None and served is None:  # the script under torchrun, a process a GPU
        nodes, per_node = nodes_of(option)
        host_run = train_launch(kind, nodes, per_node)
        pod_run = train_launch(kind, 1, option.hardware.count)
    if run is None and served is not None:
        host_run = node_script(option, image) or host_run
        pod_run = pod_command(option) or pod_run
        if kind == "slurm" and nodes_of(option)[0] > 1:  # the batch script runs on one node
            host_run = f"srun --ntasks-per-node=1 bash -c {shlex.quote(host_run)}"
    if image is None:
        engine_id = served[1].engine if served is not None else None
        image = pick_image(option, engine_id, kind == "kubernetes")
    # the port the engine's own launch serves on (a command of the user's: unknown)
    port = None
    if run is None and served is not None:
        from whichgpu.job.engine_releases import engine_profile

        port = engine_profile(served[1].engine).port
    if kind == "skypilot":
        return skypilot_task(catalog, result, option, name, host_run, setup, port)
    if kind == "kubernetes":
        return kubernetes_manifest(result, option, name, pod_run, image, port)
    if kind == "slurm":
        return slurm_header(result, option, name, host_run)
    if kind in ("dynamo", "llm-d"):  # a Kubernetes operator's own resource for a served pick
        from whichgpu.commands import dynamo_deploy, llmd_deploy

        system = dynamo_deploy.SYSTEM if kind == "dynamo" else llmd_deploy.SYSTEM
        if served is None:
            raise InvalidInput("deploy_not_served", system=system)

        def launch(tp: int) -> str:
            found = serving_command(option, 0, tp)
            assert found is not None  # the pick serves
            if MODEL_ENV in found[1]:  # a checkpoint only the user can name
                raise InvalidInput("deploy_checkpoint")
            return found[1]

        if option.hardware.gpu.vendor != "NVIDIA":  # the resource and images are CUDA's
            raise InvalidInput("deploy_vendor", system=system, gpu=option.hardware.gpu.name)
        mig, summary = option.hardware.mig is not None, _summary(result, option)
        deploy = dynamo_deploy.dynamo_manifest if kind == "dynamo" else llmd_deploy.llmd_values
        lines, doc = deploy(served, mig, summary, name, launch)
        return "".join(f"# {line}\n" for line in lines) + _dump(doc)
    from whichgpu.catalog.names import closest

    raise InvalidInput(
        "unknown_value",
        field=("export",),
        value=kind,
        valid=", ".join(FORMATS),
        hint=closest(kind, FORMATS) or "",
    )
