"""A served pick whose plan runs prefill and decode on separate workers, deployed as the
engine's own PD mode runs it on one node: each prefill and decode worker a server on its own
GPUs and port, and a router in front, which sends each request to a prefill worker and then
to a decode worker that pulls its KV cache over NIXL (:data:`PD_LAUNCH`, cited per engine).
Used by the SkyPilot and Slurm exports (:func:`~whichgpu.commands.serve_launch.node_script`); a
Kubernetes pod is one replica, so its manifest keeps the replicas and says so."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from whichgpu.estimate.serving_types import Disaggregated
    from whichgpu.job.engines import EngineProfile

#: The port the router listens on (SGLang's examples and vllm-router's: ``--port 8000``)
ROUTER_PORT = 8000

#: A prefill worker's bootstrap port, where the decode workers arrange its KV transfers
#: (SGLang's ``--disaggregation-bootstrap-port``, default 8998); a worker a port
BOOTSTRAP_PORT = 8998

#: A worker's NIXL side channel, where vLLM's NixlConnector hands KV blocks over
#: (``VLLM_NIXL_SIDE_CHANNEL_PORT``, default 5600 in vllm/envs.py): "every worker on a host
#: needs a unique port" (the NixlConnector usage guide), so a worker a port from here
SIDE_CHANNEL_PORT = 5600

#: vLLM's KV connector as the NixlConnector usage guide and Dynamo's examples configure it
#: on every worker, prefill and decode alike (``--kv-transfer-config``)
NIXL_CONNECTOR = '{"kv_connector":"NixlConnector","kv_role":"kv_both"}'


@dataclass(frozen=True)
class PdLaunch:
    """How whichgpu writes an engine's PD mode on one node."""

    #: What a prefill worker adds to the engine's launch ({bootstrap}: its bootstrap port)
    prefill_flags: str
    #: What a decode worker adds
    decode_flags: str
    #: The router in front ({prefills}, {decodes}: the workers' entries, {n_prefill},
    #: {n_decode}: how many; {port}); lines before its command write its configuration
    router: str
    #: A prefill worker's entry for the router ({url}, {host_port}, {bootstrap})
    prefill_entry: str
    #: A decode worker's ({url}, {host_port})
    decode_entry: str
    #: What joins the entries (a space on a command line, a newline in a YAML list)
    entry_sep: str = " "
    #: Lines a prefill worker and a decode worker add to the engine's options file
    prefill_options: tuple[str, ...] = ()
    decode_options: tuple[str, ...] = ()
    #: Variables each worker exports ({side}: its own side-channel port)
    worker_env: str = ""
    #: The first worker's port, counted up a worker (0: the engine's own port)
    first_port: int = 0
    #: What to install where the engine's image lacks it
    needs: str = "pip install nixl where the image lacks it"


PD_LAUNCH: dict[str, PdLaunch] = {
    # docs/advanced_features/pd_disaggregation.md (sgl-project/sglang@08edc50, "NIXL",
    # "Llama Single Node"): --disaggregation-mode prefill|decode,
    # --disaggregation-transfer-backend nixl, `python -m sglang_router.launch_router
    # --pd-disaggregation`; router.md (@046ed66, "Prefill/Decode Disaggregation"):
    # "--prefill URL BOOTSTRAP_PORT", "--decode URL"; server_args.py
    # --disaggregation-bootstrap-port (default 8998)
    "sglang": PdLaunch(
        prefill_flags=" --disaggregation-mode prefill --disaggregation-transfer-backend nixl "
        "--disaggregation-bootstrap-port {bootstrap}",
        decode_flags=" --disaggregation-mode decode --disaggregation-transfer-backend nixl",
        router="python -m sglang_router.launch_router --pd-disaggregation {prefills} "
        "{decodes} --host 0.0.0.0 --port {port}",
        prefill_entry="--prefill {url} {bootstrap}",
        decode_entry="--decode {url}",
    ),
    # vllm-project/vllm docs/features/nixl_connector_usage.md (@026c83f): each worker
    # `vllm serve … --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":
    # "kv_both"}'` with its own VLLM_NIXL_SIDE_CHANNEL_PORT (5600, 5601 on one host; the
    # guide's ports 8100 for prefill, 8200 for decode); the router is vllm-project/router
    # (`pip install vllm-router`; docs/model-routing/pd-disaggregation.md @a07dacb,
    # docs/cli_reference.md @df71929): `vllm-router --vllm-pd-disaggregation --prefill URL
    # --decode URL --host --port`, its KV connector nixl by default
    "vllm": PdLaunch(
        prefill_flags=f" --kv-transfer-config '{NIXL_CONNECTOR}'",
        decode_flags=f" --kv-transfer-config '{NIXL_CONNECTOR}'",
        router="vllm-router --vllm-pd-disaggregation {prefills} {decodes} --host 0.0.0.0 "
        "--port {port}",
        prefill_entry="--prefill {url}",
        decode_entry="--decode {url}",
        worker_env=" VLLM_NIXL_SIDE_CHANNEL_PORT={side}",
        first_port=8100,
        needs="pip install vllm-router, and nixl where the image lacks it",
    ),
    # NVIDIA/TensorRT-LLM docs/source/features/disagg-serving.md (@0434b98) and
    # examples/disaggregated/README.md (@c3c3d76): context (prefill) and generation (decode)
    # servers are `trtllm-serve` with a cache_transceiver_config in their options file
    # (backend NIXL; the context servers' disable_overlap_scheduler: True), the front is
    # `trtllm-serve disaggregated -c disagg_config.yaml` naming them (hostname, port,
    # context_servers and generation_servers: num_instances, urls "host:port"); the
    # example's servers on 8001 up, the front on 8000
    "trtllm": PdLaunch(
        prefill_flags="",
        decode_flags="",
        router="cat > /tmp/whichgpu-disagg.yaml <<'EOF'\nhostname: 0.0.0.0\nport: {port}\n"
        "backend: pytorch\ncontext_servers:\n  num_instances: {n_prefill}\n  urls:\n"
        "{prefills}\ngeneration_servers:\n  num_instances: {n_decode}\n  urls:\n{decodes}\n"
        "EOF\ntrtllm-serve disaggregated -c /tmp/whichgpu-disagg.yaml",
        prefill_entry='    - "{host_port}"',
        decode_entry='    - "{host_port}"',
        entry_sep="\n",
        prefill_options=(
            "disable_overlap_scheduler: true",
            "cache_transceiver_config:",
            "  backend: NIXL",
        ),
        decode_options=("cache_transceiver_config:", "  backend: NIXL"),
        first_port=8001,
        needs="the TensorRT-LLM image ships NIXL",
    ),
}


def pd_engine(split: Disaggregated | None, engine: EngineProfile, node_gpus: int) -> bool:
    """Whether the pick's separate workers are written as such: a disaggregated plan, on an
    engine whose PD mode whichgpu can launch (:data:`PD_LAUNCH`), run from the host (not
    from an image's entrypoint), its workers in one node of ``node_gpus`` GPUs."""
    return (
        split is not None
        and engine.id in PD_LAUNCH
        and not engine.host_docker
        and split.gpus <= node_gpus
    )


def pd_script(
    split: Disaggregated,
    engine: EngineProfile,
    launch: Callable[[int, int, str, tuple[str, ...]], str],
) -> str:
    """The node's script: ``split``'s prefill workers, then its decode workers, each in the
    background on its GPUs (``CUDA_VISIBLE_DEVICES``), its port (counted up from
    :attr:`PdLaunch.first_port`, else the engine's) and its side channel where the engine
    has one, the router in front of them, and a ``wait``. ``launch(tp, port, flags)``: the
    engine's launch command for a worker of ``tp`` GPUs on ``port`` with ``flags`` added and
    ``options`` in its options file."""
    how = PD_LAUNCH[engine.id]
    lines: list[str] = []
    prefills: list[str] = []
    decodes: list[str] = []
    gpu = worker = 0
    roles = [("prefill", split.prefill_tp)] * split.prefill_workers
    roles += [("decode", split.decode_tp)] * split.decode_workers
    for role, tp in roles:
        devices = ",".join(str(g) for g in range(gpu, gpu + tp))
        where = (how.first_port or engine.port) + worker
        host_port = f"127.0.0.1:{where}"
        url = f"http://{host_port}"
        if role == "prefill":
            bootstrap = BOOTSTRAP_PORT + len(prefills)
            flags = how.prefill_flags.replace("{bootstrap}", str(bootstrap))
            options = how.prefill_options
            prefills.append(how.prefill_entry.format(url=url, host_port=host_port,
                                                     bootstrap=bootstrap))  # fmt: skip
        else:
            flags, options = how.decode_flags, how.decode_options
            decodes.append(how.decode_entry.format(url=url, host_port=host_port))
        env = how.worker_env.format(side=SIDE_CHANNEL_PORT + worker)
        lines.append(f"(export CUDA_VISIBLE_DEVICES={devices}{env}; "
                     f"{launch(tp, where, flags, options)}) &")  # fmt: skip
        gpu, worker = gpu + tp, worker + 1
    front = how.router.format(prefills=how.entry_sep.join(prefills), n_prefill=len(prefills),
                              decodes=how.entry_sep.join(decodes), n_decode=len(decodes),
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
            f"{head}: the script starts them and a router on port {ROUTER_PORT} in front, "
            f"KV caches moved over NIXL ({PD_LAUNCH[engine.id].needs})"
        )
    return (
        f"{head}; these replicas stand in for them: separate workers need a router passing "
        "KV caches between them (NVIDIA Dynamo, llm-d, or the engine's own PD mode), which "
        "this export does not write for this engine or layout"
    )
