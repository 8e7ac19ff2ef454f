"""A served pick whose plan runs prefill and decode on separate workers, deployed as the
engine's own PD mode runs it on one node: each prefill and decode worker a server on its own
GPUs and port, and the engine's router in front, which passes each request's KV cache from
its prefill worker to a decode worker (:attr:`~whichgpu.job.engines.EngineProfile.pd_flags`;
SGLang's "PD Disaggregation" page, its NIXL single-node example). Used by the SkyPilot and
Slurm exports (:func:`~whichgpu.commands.export.node_script`); a Kubernetes pod is one
replica, so its manifest keeps the replicas and says so."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from whichgpu.estimate.serving_types import Disaggregated
    from whichgpu.job.engines import EngineProfile

#: The port the router listens on (SGLang's examples: ``--port 8000``)
ROUTER_PORT = 8000

#: A prefill worker's bootstrap port, where the decode workers arrange its KV transfers
#: (SGLang's ``--disaggregation-bootstrap-port``, default 8998); a worker a port
BOOTSTRAP_PORT = 8998


def pd_engine(split: Disaggregated | None, engine: EngineProfile, node_gpus: int) -> bool:
    """Whether the pick's separate workers are written as such: a disaggregated plan, on an
    engine whose PD mode whichgpu can launch (:attr:`pd_flags`), run from the host (not from
    an image's entrypoint), its workers in one node of ``node_gpus`` GPUs."""
    return (
        split is not None
        and bool(engine.pd_flags)
        and not engine.host_docker
        and split.gpus <= node_gpus
    )


def pd_script(
    split: Disaggregated, engine: EngineProfile, launch: Callable[[int, int, str], str]
) -> str:
    """The node's script: ``split``'s prefill workers, then its decode workers, each in the
    background on its GPUs (``CUDA_VISIBLE_DEVICES``) and its port (the engine's, counted
    up), the router in front of them, and a ``wait``. ``launch(tp, port, flags)``: the
    engine's launch command for a worker of ``tp`` GPUs on ``port`` with ``flags`` added."""
    prefill_flags, decode_flags, router = engine.pd_flags  # type: ignore[misc]
    lines: list[str] = []
    prefills: list[str] = []
    decodes: list[str] = []
    gpu = port = 0
    roles = [("prefill", split.prefill_tp)] * split.prefill_workers
    roles += [("decode", split.decode_tp)] * split.decode_workers
    for role, tp in roles:
        devices = ",".join(str(g) for g in range(gpu, gpu + tp))
        where = engine.port + port
        if role == "prefill":
            bootstrap = BOOTSTRAP_PORT + len(prefills)
            flags = prefill_flags.format(bootstrap=bootstrap)
            prefills.append(f"--prefill http://127.0.0.1:{where} {bootstrap}")
        else:
            flags = decode_flags
            decodes.append(f"--decode http://127.0.0.1:{where}")
        lines.append(f"(export CUDA_VISIBLE_DEVICES={devices}; {launch(tp, where, flags)}) &")
        gpu, port = gpu + tp, port + 1
    front = router.format(prefills=" ".join(prefills), decodes=" ".join(decodes),
                          port=ROUTER_PORT)  # fmt: skip
    return "\n".join([*lines, f"{front} &", "wait"])


def pd_comment(
    split: Disaggregated, engine: EngineProfile, written: bool, served_rps: float
) -> str:
    """What the export's comment says of separate workers: that the script starts them and
    the router (``written``), or that its replicas stand in for them, and why."""
    head = (
        f"whichgpu's plan runs prefill and decode apart ({split.prefill_workers} prefill "
        f"× {split.prefill_tp} GPUs, {split.decode_workers} decode × {split.decode_tp}: "
        f"{split.capacity_rps:.2f} requests/s against replicas' {served_rps:.2f})"
    )
    if written:
        return (
            f"{head}: the script starts them and {engine.name}'s router on port "
            f"{ROUTER_PORT} in front, KV caches moved over NIXL (pip install nixl where the "
            "image lacks it)"
        )
    return (
        f"{head}; these replicas stand in for them: separate workers need a router passing "
        "KV caches between them (NVIDIA Dynamo, llm-d, or the engine's own PD mode), which "
        "this export does not write for this engine or layout"
    )
