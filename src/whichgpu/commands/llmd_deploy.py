"""A served pick as llm-d deploys it on Kubernetes: the values of llm-d's ModelService Helm
chart (llm-d-incubation/llm-d-modelservice, ``charts/llm-d-modelservice/values.yaml``
@024c0f2 and its prefill/decode example ``examples/values-pd.yaml`` @91b5bb0). The chart runs
vLLM: ``modelCommand: vllmServe`` starts ``vllm serve`` with the model, ``--port``,
``--tensor-parallel-size`` from ``parallelism.tensor``, ``--data-parallel-size`` from
``parallelism.data`` and ``--served-model-name`` (its ``vllmServeModelCommand`` helper), then
the container's ``args``: the engine's other flags as whichgpu launches it
(:func:`~whichgpu.commands.serve_launch.serving_command`). A plan that runs prefill and decode apart
is the chart's ``prefill`` and ``decode`` pods, each its workers' count and GPUs, KV caches
moved over NIXL (vLLM's NixlConnector, the example's side channel on the pod's IP, port
5600), the routing sidecar in front of decode (``routing.proxy``, connector ``nixlv2``, vLLM
behind it on 8200); replicas without a split are ``decode`` pods alone, no prefill pod and no
sidecar. The inference scheduler (``routing.epp``) and the gateway keep the chart's
defaults."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from whichgpu.commands.dynamo_deploy import deployable, engine_args, layout_said
from whichgpu.commands.export_images import HF_TOKEN_SECRET
from whichgpu.commands.pd_deploy import NIXL_CONNECTOR

if TYPE_CHECKING:
    from whichgpu.estimate.serving_types import ServingPlan
    from whichgpu.job import Job
    from whichgpu.models.arch import ModelArch
    from whichgpu.plan.run import Run

#: The system's name in an answer
SYSTEM = "llm-d"
#: The port the pods serve on (``routing.servicePort``), and vLLM's behind the decode pods'
#: routing sidecar (``routing.proxy.targetPort``)
SERVICE_PORT = 8000
PROXY_PORT = 8200
#: The NIXL side channel the example opens on each pod (``VLLM_NIXL_SIDE_CHANNEL_PORT``)
SIDE_CHANNEL_PORT = 5600
#: What the chart's ``vllm serve`` already passes, so the args do not repeat them
CHART_FLAGS = ("--host", "--port", "--tensor-parallel-size", "--data-parallel-size",
               "--served-model-name")  # fmt: skip


def _checkpoint_gib(arch: ModelArch) -> int:
    """The volume the model is downloaded to (``modelArtifacts.size``): its checkpoint's
    bytes (16-bit, or the format it ships in) and a tenth more for its tokenizer and
    configuration files, in whole GiB."""
    from whichgpu.job import QUANT_BITS

    bits = QUANT_BITS.get(arch.checkpoint_quant or "", 16)
    return math.ceil(arch.total_params * bits / 8 * 1.1 / 2**30)


def _pod(
    image: str, gpus: int, replicas: int, args: list[str], port: int, pd: bool, data: int
) -> dict[str, Any]:
    """One role's pods: ``replicas`` of ``gpus`` GPUs each (``data`` of them attention
    data-parallel ranks), vLLM on ``port`` with ``args``, and the example's NIXL environment
    where prefill and decode run apart."""
    container: dict[str, Any] = {
        "name": "vllm",
        "image": image,
        "modelCommand": "vllmServe",
        "args": args,
    }
    ports = [{"containerPort": port, "protocol": "TCP"}]
    if pd:
        container["env"] = [
            {"name": "VLLM_NIXL_SIDE_CHANNEL_HOST",
             "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
            {"name": "VLLM_NIXL_SIDE_CHANNEL_PORT", "value": str(SIDE_CHANNEL_PORT)},
        ]  # fmt: skip
        ports.append({"containerPort": SIDE_CHANNEL_PORT, "protocol": "TCP"})
    gpu = {"nvidia.com/gpu": str(gpus)}
    container |= {
        "ports": ports,
        "resources": {"limits": dict(gpu), "requests": dict(gpu)},
        "mountModelVolume": True,
    }
    tensor = gpus // data
    return {
        "create": True,
        "replicas": replicas,
        "parallelism": {"tensor": tensor, "data": data},
        "containers": [container],
    }


def llmd_values(
    served: tuple[Run, ServingPlan, Job],
    mig: bool,
    summary: str,
    name: str,
    launch: Callable[[int], str],
) -> tuple[list[str], dict[str, Any]]:
    """A served pick (its run, plan and job: ``served``) on vLLM as the ModelService chart's
    values: the lines of its header comment and the document. ``name``: the release's (the
    pods' model label); ``launch(tp)``: vLLM's launch command for a worker of ``tp`` GPUs,
    ``vllm serve MODEL …``. One line where llm-d cannot take it as planned (another engine, a
    MIG slice, a worker wider than a node)."""
    from whichgpu.job.engine_releases import ENGINE_IDS, engine_profile
    from whichgpu.job.engine_times import family
    from whichgpu.models import resolve_model

    run, plan, job = served
    engine = engine_profile(plan.engine)
    vllm = tuple(e for e in ENGINE_IDS if family(e) == "vllm")  # each in its release's image
    split = deployable(run, plan, mig, SYSTEM, vllm)
    # the checkpoint vLLM serves: the launch's positional model, kept as the first word
    model = engine_args(launch(plan.gpus_per_replica), ("vllm", "serve"), "", CHART_FLAGS)[0]
    component = run.component
    arch = component.arch or resolve_model(component.model, component.params)

    def args(tp: int, pd: bool) -> list[str]:
        own = engine_args(launch(tp), ("vllm", "serve"), None, CHART_FLAGS)
        return [*own, "--kv-transfer-config", NIXL_CONNECTOR] if pd else own

    data = plan.gpus_per_replica if plan.attention_dp else 1
    values: dict[str, Any] = {
        "multinode": False,
        "modelArtifacts": {
            "name": model,
            "uri": f"hf://{model}",
            "size": f"{_checkpoint_gib(arch)}Gi",
            "authSecretName": HF_TOKEN_SECRET,
            # the pods' labels, which the chart's InferencePool selects on: this model's own
            "labels": {"llm-d.ai/inferenceServing": "true", "llm-d.ai/model": name},
        },
        "routing": {
            "servicePort": SERVICE_PORT,
            "proxy": {
                "enabled": split is not None,
                "targetPort": PROXY_PORT,
                "connector": "nixlv2",
            },
        },
    }
    if split is not None:
        values["decode"] = _pod(engine.image, split.decode_tp, split.decode_workers,
                                args(split.decode_tp, True), PROXY_PORT, True, 1)  # fmt: skip
        values["prefill"] = _pod(engine.image, split.prefill_tp, split.prefill_workers,
                                 args(split.prefill_tp, True), SERVICE_PORT, True, 1)  # fmt: skip
    else:
        tp = plan.gpus_per_replica
        values["decode"] = _pod(engine.image, tp, plan.replicas, args(tp, False), SERVICE_PORT,
                                False, data)  # fmt: skip
        values["prefill"] = {"create": False, "replicas": 0}
    lines = [
        summary,
        f"llm-d ModelService values, {engine.labelled} pods: {layout_said(plan, split)}",
        "helm install it with the llm-d-modelservice chart where llm-d's infrastructure "
        f"runs; a Secret {HF_TOKEN_SECRET} holds HF_TOKEN",
    ]
    if job.speculative:
        lines.append(f"the plan assumes {job.speculative} speculative decoding: add vLLM's "
                     "options to the containers' args")  # fmt: skip
    return lines, values
