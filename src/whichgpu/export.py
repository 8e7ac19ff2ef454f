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
"""

from __future__ import annotations

import math
from typing import Any

from whichgpu.catalog.store import Catalog
from whichgpu.errors import InvalidInput
from whichgpu.recommender.engine import Option, Recommendation

FORMATS = ("skypilot", "kubernetes", "slurm")
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


def _dump(doc: dict[str, Any]) -> str:
    import yaml

    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)


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
    if setup:
        doc["setup"] = setup
    doc["run"] = run
    header = f"# {_summary(result, option)}\n"
    slow = _slow_hours(option)
    if slow is not None and option.time_s is not None:
        expected = option.time_s / 3600
        header += f"# estimated hours: {expected:.1f} (up to {slow:.1f})\n"
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
    container = {
        "name": "main",
        "image": image,
        "command": ["/bin/sh", "-c", run],
        "resources": {"limits": limits},
    }
    annotations = {"whichgpu/pick": _summary(result, option)}
    serving = option.time_s is None or all(
        r.component.kind == "inference" and r.component.hours is not None for r in option.runs
    )
    labels = {"app": name}
    if serving:
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
    lines += ["", run, ""]
    return "\n".join(lines)


def export(
    catalog: Catalog,
    result: Recommendation,
    kind: str,
    name: str,
    run: str,
    image: str,
    setup: str | None = None,
) -> str:
    option = result.pick
    if option is None:
        raise InvalidInput("nothing_to_export")
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
