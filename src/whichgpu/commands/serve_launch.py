"""What a served pick runs: its nodes, its engine's launch command for each replica, each
node's script of servers and a pod's command, and the path a replica says it is ready on.
The exports write these into their formats (:mod:`whichgpu.commands.export`), as
:mod:`whichgpu.commands.train_launch` gives a training pick's launch."""

from __future__ import annotations

import math
import shlex
from typing import TYPE_CHECKING

from whichgpu.commands.export_images import pick_image
from whichgpu.commands.recommend.rank import Option

if TYPE_CHECKING:
    from whichgpu.estimate.serving_types import ServingPlan
    from whichgpu.job import Job
    from whichgpu.plan import Run


#: GPUs per node: HGX/DGX baseboards and the usual PCIe servers hold 8.
GPUS_PER_NODE = 8


def nodes_of(option: Option) -> tuple[int, int]:
    """(nodes, GPUs per node) for the pick's cards: one node per isolated service, else as
    few nodes as hold the count, each of the instance shape its offers sell (GB200 NVL72:
    4-GPU trays; a 1-GPU VM: one), 8 GPUs where it is bought or has no shape."""
    hw = option.hardware
    node = hw.per_node or GPUS_PER_NODE
    if hw.services > 1 and hw.count <= node:
        return hw.services, hw.count
    gpus = option.gpus
    if gpus <= node:
        return 1, gpus
    return math.ceil(gpus / node), node


#: The variable a served pick's command reads its checkpoint from where the engine needs
#: one whichgpu cannot name (pre-quantized INT4, a GGUF file): unset, the command stops
#: saying what to set it to
MODEL_ENV = "WHICHGPU_MODEL"


def served_of(option: Option) -> tuple[Run, ServingPlan, Job] | None:
    """The pick's first served model: its run, serving plan and job. A disaggregated plan
    is deployed as the replicas of the same GPUs it was weighed against (their own plan):
    its prefill and decode workers need a router in front that passes each request's KV
    cache between them (NVIDIA Dynamo, llm-d, ``sglang_router --pd-disaggregation``),
    which these exports do not write; the comment says so."""
    for run in option.runs:
        if run.serving is not None and run.job is not None:
            plan = run.serving
            return run, plan.replicas_plan or plan, run.job
    return None


def serving_command(
    option: Option,
    replica: int = 0,
    tp: int | None = None,
    extra: str = "",
    pods: bool = False,
    options: tuple[str, ...] = (),
) -> tuple[str, str] | None:
    """The pick's first served model: a comment on its plan, and the engine's launch command
    for replica ``replica`` of a node (:data:`whichgpu.job.engines.ENGINES` ``launch``: a
    server that runs until stopped, on the engine's port plus ``replica``); ``tp`` and
    ``extra``: a worker's GPUs and the flags it adds (separate prefill and decode workers,
    :mod:`whichgpu.commands.pd_deploy`), ``options`` the lines it adds to the engine's
    options file; ``pods``: for a Kubernetes pod a replica, where separate workers are never
    written.

    The weight format is the engine's own flag where it quantizes the 16-bit checkpoint
    as it loads (:meth:`~whichgpu.job.engines.EngineProfile.quantization`); where it loads a
    pre-quantized or GGUF checkpoint instead, the command reads it from ``$WHICHGPU_MODEL``
    and the comment says which (never the 16-bit checkpoint served as if quantized)."""
    from whichgpu.job.engine_releases import engine_profile
    from whichgpu.models.presets import presets

    served = served_of(option)
    if served is None:
        return None
    run, plan, job = served
    engine = engine_profile(plan.engine)
    component = run.component
    preset = presets().get(component.model or "")
    model = preset.hf_id if preset is not None and preset.hf_id else component.model or ""
    flag, checkpoint = engine.quantization(job.quant)
    argument = shlex.quote(model)
    if checkpoint is not None:
        argument = f'"${{{MODEL_ENV}:?set it to {checkpoint} of {model}}}"'
    max_len = job.prompt + max(job.generate, 1)
    # a KV dtype the engine would not take by itself
    before, after = engine.kv_launch(job, engine.port + replica, options)
    launch = engine.parallel_launch(engine.launch, plan.attention_dp)
    command = (
        before
        + launch.format(
            model=argument,
            tp=tp or plan.gpus_per_replica,
            max_len=max_len,
            context=max_len * plan.max_sequences,
            step_tokens=max(engine.step_token_limit, job.prompt),
            sequences=math.ceil(plan.max_sequences / plan.gpus_per_replica)
            if plan.attention_dp and engine.rank_limits
            else plan.max_sequences,  # each data-parallel rank's own cap
            port=engine.port + replica,
            quant=flag,
        )
        + after
        + extra
    )
    point = plan.operating
    layout = " (attention data-parallel, experts expert-parallel)" if plan.attention_dp else ""
    comment = (
        f"serving {component.label}: {engine.name}, {plan.replicas} × "
        f"{plan.gpus_per_replica}-GPU replica{'' if plan.replicas == 1 else 's'}{layout}, "
        f"{point.rate_rps:.2f} requests/s each with "
        f"{math.ceil(point.concurrency)} in flight (TTFT {point.ttft_s * 1e3:.0f} ms, "
        f"{point.tpot_s * 1e3:.1f} ms per output token, {component.percentile})"
    )
    if checkpoint is not None:
        comment += (
            f"; {engine.name} loads {checkpoint} of the model, not its 16-bit weights: "
            f"set ${MODEL_ENV} to one"
        )
    if job.speculative:  # its draft head and flags vary by engine and model: said, not set
        comment += (
            f"; the plan assumes {job.speculative} speculative decoding ({job.draft_tokens} "
            f"draft tokens, {job.acceptance:.2f} tokens a step): add {engine.name}'s "
            "speculative decoding options (and the draft head) to the command"
        )
    split = run.serving.disaggregated if run.serving is not None else None
    if split is not None:
        from whichgpu.commands.pd_deploy import pd_comment, pd_engine

        written = not pods and pd_engine(split, engine, nodes_of(option)[1])
        comment += "; " + pd_comment(split, engine, written, plan.served_rps)
    return comment, command


def replicas_a_node(option: Option, plan: ServingPlan) -> int:
    """Serving replicas on each node (0 where one replica spans nodes)."""
    _nodes_count, per_node = nodes_of(option)
    return min(plan.replicas, per_node // plan.gpus_per_replica)


def node_script(option: Option, image: str | None = None) -> str | None:
    """What each node of a served pick runs (a SkyPilot task's ``run``, a Slurm job's step):
    one server per replica it holds, each on its own GPUs and port, in the background,
    then a ``wait`` on them all, so that 4 × 2-GPU replicas on an 8-GPU node are four
    servers, not one on two GPUs. A replica's GPUs are its ``CUDA_VISIBLE_DEVICES`` (CUDA
    Programming Guide, "CUDA Environment Variables"), or ``docker run --gpus
    '"device=0,1"'`` for an engine run from its image (NVIDIA Container Toolkit, "GPU
    enumeration"); its port the engine's plus its index. One replica a node (or one
    spanning nodes) is its command alone. None for a pick that serves nothing."""
    from whichgpu.job.engine_releases import engine_profile

    served = served_of(option)
    if served is None:
        return None
    run, plan = served[0], served[1]
    engine = engine_profile(plan.engine)
    split = run.serving.disaggregated if run.serving is not None else None
    from whichgpu.commands.pd_deploy import pd_engine, pd_script

    if split is not None and pd_engine(split, engine, nodes_of(option)[1]):

        def launch(tp: int, port: int, flags: str, options: tuple[str, ...]) -> str:
            found = serving_command(option, port - engine.port, tp, flags, options=options)
            assert found is not None  # the pick serves (served above)
            return found[1]

        return pd_script(split, engine, launch)
    count = max(replicas_a_node(option, plan), 1)
    lines = []
    for replica in range(count):
        found = serving_command(option, replica)
        if found is None:
            return None
        command = found[1]
        gpus = range(replica * plan.gpus_per_replica, (replica + 1) * plan.gpus_per_replica)
        devices = ",".join(str(gpu) for gpu in gpus)
        if engine.host_docker:
            args = command.partition(" ")[2]  # the image's entrypoint is the program
            where = "--gpus " + ("all" if count == 1 else shlex.quote(f'"device={devices}"'))
            if option.hardware.gpu.vendor == "AMD":  # ROCm docs, "Running ROCm Docker
                # containers": the kernel driver's devices, and the GPUs by ROCR_VISIBLE_DEVICES
                where = "--device /dev/kfd --device /dev/dri --group-add video" + (
                    "" if count == 1 else f" -e ROCR_VISIBLE_DEVICES={devices}")  # fmt: skip
            run_in = image or pick_image(option, plan.engine, container=True)
            command = (
                f"docker run --rm {where} --shm-size 1g --network host "
                f"-v $HOME/.cache/huggingface:/data -e HF_TOKEN {run_in} {args}"
            )
        if count == 1:
            return command
        lines.append(f"(export CUDA_VISIBLE_DEVICES={devices}; {command}) &")
    return "\n".join([*lines, "wait"])


def pod_command(option: Option) -> str | None:
    """A served pick's command in one Kubernetes pod (one replica, in the engine's image,
    its GPUs the pod's): the launch command, its program where the image keeps it."""
    from whichgpu.job.engine_releases import engine_profile

    served, command = served_of(option), serving_command(option)
    if served is None or command is None:
        return None
    return engine_profile(served[1].engine).image_dir + command[1]


#: The path SkyServe probes a replica's readiness on: the OpenAI-compatible model list
#: (SkyPilot's docs, "Serving Models", probe a vLLM replica on ``/v1/models``; SGLang,
#: trtllm-serve, llama.cpp's server, Ollama and ``transformers serve`` list their models there
#: too), TGI's documented ``/health`` for TGI
READINESS_PROBE = "/v1/models"


READINESS_PROBES = {"tgi": "/health"}


def readiness_probe(engine_id: str) -> str:
    """The path a served replica says it is ready on (:data:`READINESS_PROBE`)."""
    from whichgpu.job.engine_times import family

    return READINESS_PROBES.get(family(engine_id), READINESS_PROBE)
