"""A served pick as NVIDIA Dynamo deploys it on Kubernetes: one ``DynamoGraphDeployment``
(ai-dynamo/dynamo examples/backends/vllm/deploy/disagg.yaml @7893f26 and agg.yaml @01c9413,
API ``nvidia.com/v1alpha1``), its ``Frontend`` (``python -m dynamo.frontend``: the OpenAI
API, port 8000) in front of the engine's workers, each worker a pod with its replica's GPUs
(``resources.limits.gpu``). A plan that runs prefill and decode apart is two services, the
prefill workers and the decode workers (``componentType: worker``, ``subComponentType:
prefill|decode``, ``--disaggregation-mode prefill|decode``), KV caches moved between them
over NIXL (vLLM's NixlConnector, SGLang's ``--disaggregation-transfer-backend nixl``); one
that runs replicas is one ``worker`` service of that many replicas (the aggregated
example's). The worker's arguments are the engine's own serving flags
(:func:`~whichgpu.commands.serve_launch.serving_command`), which ``dynamo.vllm`` and
``dynamo.sglang`` pass through to the engine; ``dynamo.trtllm`` names them its own way and
takes the LLM API's options file as JSON (``--override-engine-args``), a prefill or decode
worker's with the ``cache_transceiver_config`` TensorRT-LLM's own disaggregated servers
run (:data:`~whichgpu.commands.pd_deploy.PD_LAUNCH`)."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from whichgpu.commands.export_images import HF_TOKEN_SECRET
from whichgpu.commands.pd_deploy import NIXL_CONNECTOR, PD_LAUNCH
from whichgpu.errors import InvalidInput

if TYPE_CHECKING:
    from whichgpu.estimate.serving_types import Disaggregated, ServingPlan
    from whichgpu.job import Job
    from whichgpu.plan.run import Run


@dataclass(frozen=True)
class DynamoBackend:
    """How Dynamo runs an engine's workers."""

    #: The runtime image (ai-dynamo/dynamo v1beta1 examples: vllm-runtime:1.3.0; the SGLang
    #: disaggregated example: sglang-runtime:1.3.1)
    image: str
    #: The worker's module (``python3 -m dynamo.vllm``)
    module: str
    #: The services' names, prefill then decode (the examples' own)
    names: tuple[str, str]
    #: What the engine's launch starts with, dropped for the module (``vllm serve``)
    program: tuple[str, ...]
    #: The engine's positional model argument, where it takes one, as an option
    model_option: str
    #: What a prefill and a decode worker add beyond ``--disaggregation-mode``
    prefill_args: tuple[str, ...] = ()
    decode_args: tuple[str, ...] = ()
    #: The launch's options the module names otherwise (``--tp_size`` → its own), and those
    #: it does not take (``--host``/``--port``: the frontend serves HTTP)
    renamed: tuple[tuple[str, str], ...] = ()
    dropped: tuple[str, ...] = ("--host", "--port")
    #: Where the module takes the engine's options-file lines, as JSON (its
    #: ``--override-engine-args``); "" where the engine has no options file
    options_arg: str = ""


#: The examples' worker arguments: vLLM's workers both run the NixlConnector
#: (:data:`~whichgpu.commands.pd_deploy.NIXL_CONNECTOR`); SGLang's name the NIXL transfer
#: backend (ai-dynamo/dynamo SGLang disagg.yaml @04521f4)
_SGLANG_NIXL = ("--disaggregation-transfer-backend", "nixl")

DYNAMO_BACKENDS: dict[str, DynamoBackend] = {
    "vllm": DynamoBackend(
        image="nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.3.0",
        module="dynamo.vllm",
        names=("VllmPrefillWorker", "VllmDecodeWorker"),
        program=("vllm", "serve"),
        model_option="--model",
        prefill_args=("--kv-transfer-config", NIXL_CONNECTOR),
        decode_args=("--kv-transfer-config", NIXL_CONNECTOR),
    ),
    "sglang": DynamoBackend(
        image="nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.3.1",
        module="dynamo.sglang",
        names=("prefill", "decode"),
        program=("python", "-m", "sglang.launch_server"),
        model_option="",
        prefill_args=_SGLANG_NIXL,
        decode_args=_SGLANG_NIXL,
    ),
    # examples/backends/trtllm/deploy/disagg.yaml and agg-with-config.yaml @04521f4
    # (tensorrtllm-runtime:1.3.1, services prefill and decode); dynamo.trtllm's arguments
    # (components/src/dynamo/trtllm/utils/trtllm_utils.py): --model-path,
    # --tensor-parallel-size, --expert-parallel-size, --max-batch-size, --max-seq-len,
    # --free-gpu-memory-fraction, and --override-engine-args, a JSON of the LLM API's
    # options (the worker's options file: its KV cache's dtype, data-parallel attention,
    # cache_transceiver_config for prefill and decode apart)
    "trtllm": DynamoBackend(
        image="nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.3.1",
        module="dynamo.trtllm",
        names=("prefill", "decode"),
        program=("trtllm-serve",),
        model_option="--model-path",
        renamed=(
            ("--tp_size", "--tensor-parallel-size"),
            ("--ep_size", "--expert-parallel-size"),
            ("--max_batch_size", "--max-batch-size"),
            ("--max_seq_len", "--max-seq-len"),
            ("--kv_cache_free_gpu_memory_fraction", "--free-gpu-memory-fraction"),
        ),
        dropped=("--host", "--port", "--extra_llm_api_options"),
        options_arg="--override-engine-args",
    ),
}

#: The system's name in an answer
SYSTEM = "NVIDIA Dynamo"

#: The GPUs one worker pod may ask for: one node's (a multi-node worker is Dynamo's
#: LeaderWorkerSet deployment, which this export does not write)
NODE_GPUS = 8


def engine_args(
    command: str,
    program: tuple[str, ...],
    model_option: str | None,
    drop: tuple[str, ...] = ("--host", "--port"),
) -> list[str]:
    """The engine's serving flags from its launch ``command``: without the ``program``, with
    a positional model as ``model_option`` (None: without it), and without the options in
    ``drop`` and their values (Dynamo's frontend serves HTTP, a worker registers with it)."""
    words = shlex.split(command)
    if "&&" in words:  # what runs before the engine (writing its options file)
        words = words[words.index("&&") + 1 :]
    if tuple(words[: len(program)]) != program:
        raise ValueError(f"not a {' '.join(program)} launch: {command}")  # a programming error
    words = words[len(program) :]
    if model_option is None:
        words = words[1:]
    elif model_option:
        words = [model_option, words[0], *words[1:]]
    out: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        if word in drop:
            skip = True
            continue
        out.append(word)
    return out


def deployable(
    run: Run, plan: ServingPlan, mig: bool, system: str, engines: tuple[str, ...]
) -> Disaggregated | None:
    """The plan's prefill/decode split (None: replicas) where an operator's pods can take it:
    one line naming what would where its engine is not one of ``engines`` (the operator's),
    it runs on a MIG slice, or a worker is wider than a node (a multi-node worker is the
    operators' LeaderWorkerSet deployment, which these exports do not write)."""
    from whichgpu.job.engine_releases import engine_profile

    if plan.engine not in engines:
        asked = engine_profile(plan.engine).labelled
        raise InvalidInput("deploy_engine", system=system, engine=asked,
                           valid=", ".join(engines))  # fmt: skip
    if mig:
        raise InvalidInput("deploy_mig", system=system)
    split = run.serving.disaggregated if run.serving is not None else None
    widest = max(split.prefill_tp, split.decode_tp) if split else plan.gpus_per_replica
    if widest > NODE_GPUS:
        raise InvalidInput("kubernetes_nodes", n=widest)
    return split


def layout_said(plan: ServingPlan, split: Disaggregated | None) -> str:
    """The header comment's line on how the plan's GPUs are deployed: its prefill and decode
    workers where it splits them, else its replicas."""
    if split is not None:
        return (f"prefill and decode apart: {split.prefill_workers} prefill × "
                f"{split.prefill_tp} GPUs, {split.decode_workers} decode × {split.decode_tp}, "
                "KV caches over NIXL")  # fmt: skip
    plural = "" if plan.replicas == 1 else "s"
    return f"{plan.replicas} × {plan.gpus_per_replica}-GPU replica{plural}"


def _service(
    backend: DynamoBackend, gpus: int, replicas: int, args: list[str], sub: str | None
) -> dict[str, Any]:
    service: dict[str, Any] = {
        "envFromSecret": HF_TOKEN_SECRET,
        "componentType": "worker",
    }
    if sub is not None:
        service["subComponentType"] = sub
    service |= {
        "replicas": replicas,
        "resources": {"limits": {"gpu": str(gpus)}},
        "extraPodSpec": {
            "mainContainer": {
                "image": backend.image,
                "command": ["python3", "-m", backend.module],
                "args": args,
            }
        },
    }
    return service


def dynamo_manifest(
    served: tuple[Run, ServingPlan, Job],
    mig: bool,
    summary: str,
    name: str,
    launch: Callable[[int], str],
) -> tuple[list[str], dict[str, Any]]:
    """A served pick (its run, plan and job: ``served``) on vLLM, SGLang or TensorRT-LLM as a
    ``DynamoGraphDeployment``: the lines of its header comment and the document.
    ``launch(tp)``: the engine's launch command for a worker of ``tp`` GPUs. One line where
    Dynamo cannot take it as planned (another engine, a MIG slice, a worker wider than a
    node)."""
    from whichgpu.job.engine_releases import engine_profile

    run, plan, job = served
    backend = DYNAMO_BACKENDS.get(plan.engine)
    split = deployable(run, plan, mig, SYSTEM, tuple(DYNAMO_BACKENDS))
    assert backend is not None  # deployable() refused the others

    import yaml

    renamed = dict(backend.renamed)

    def args(tp: int, extra: tuple[str, ...], mode: str | None) -> list[str]:
        flags = ["--disaggregation-mode", mode] if mode else []
        own = engine_args(launch(tp), backend.program, backend.model_option, backend.dropped)
        own = [renamed.get(word, word) for word in own]
        if backend.options_arg:  # the options file's lines, and a role's, as the module's JSON
            how = PD_LAUNCH[plan.engine]
            role = {"prefill": how.prefill_options, "decode": how.decode_options}.get(mode or "")
            lines = engine_profile(plan.engine).option_lines(job, role or ())
            if lines:
                own += [backend.options_arg, json.dumps(yaml.safe_load("\n".join(lines)),
                                                        separators=(",", ":"))]  # fmt: skip
        return [*own, *flags, *extra]

    services: dict[str, Any] = {
        "Frontend": {
            "envFromSecret": HF_TOKEN_SECRET,
            "componentType": "frontend",
            "replicas": 1,
            "extraPodSpec": {"mainContainer": {"image": backend.image}},
        }
    }
    prefill_name, decode_name = backend.names
    if split is not None:
        services[decode_name] = _service(
            backend, split.decode_tp, split.decode_workers,
            args(split.decode_tp, backend.decode_args, "decode"), "decode",
        )  # fmt: skip
        services[prefill_name] = _service(
            backend, split.prefill_tp, split.prefill_workers,
            args(split.prefill_tp, backend.prefill_args, "prefill"), "prefill",
        )  # fmt: skip
    else:
        services["worker"] = _service(
            backend, plan.gpus_per_replica, plan.replicas,
            args(plan.gpus_per_replica, (), None), None,
        )  # fmt: skip
    layout = layout_said(plan, split)
    doc = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": name, "annotations": {"whichgpu/pick": summary}},
        "spec": {"services": services},
    }
    lines = [
        summary,
        f"NVIDIA Dynamo, {engine_profile(plan.engine).name} workers: {layout}",
        "kubectl apply -f it where Dynamo's operator runs; "
        f"a Secret {HF_TOKEN_SECRET} holds HF_TOKEN",
    ]
    if job.speculative:
        lines.append(f"the plan assumes {job.speculative} speculative decoding: add the "
                     "engine's options to the workers' args")  # fmt: skip
    return lines, doc
