"""Releases of an engine a user may ask for by id (``--engine vllm@0.6``): the engine's
profile at that release's defaults, its speed its engine's (the serving roofline and the
host time fitted on that engine's runs: :mod:`whichgpu.job.engine_times`); where a
release's MLA kernels for DeepSeek-class models predate every build whichgpu measured
(:attr:`~whichgpu.job.engines.EngineProfile.early_mla`), such a model's range is the early
builds' published runs'. The search never plans a release by itself; it is planned where it
is named. TensorRT-LLM has none: its first release that serves DeepSeek-V3/R1 is 0.19.0
(docs/source/release-notes.md: "Added DeepSeek V3/R1 support"; 0.17.0's PyTorch workflow,
"experimental", lists Llama, Mixtral, QWen and Vila), whose kernels no published run
separates from today's."""

from __future__ import annotations

from dataclasses import replace

from whichgpu.job.engines import ENGINES, EngineProfile

#: vLLM's V0 engine of the 0.6 series, which the published 2024-25 vLLM runs ran
#: (vllm-project/vllm v0.6 vllm/engine/arg_utils.py: gpu_memory_utilization 0.9, "If
#: unspecified, will use the default value of 0.9", max_num_seqs 256; chunked prefill on by
#: default only past a 32K context, prefix caching off; no data-parallel attention, no
#: disaggregated serving, n-gram speculation)
_VLLM_V0 = replace(
    ENGINES["vllm"],
    memory_fraction=0.90,
    prefill_chunk_tokens=0,
    large_gpu=None,
    formats=frozenset({"fp8", "int8", "int4"}),
    format_capability=(("fp8", 8.0),),
    prequantized=ENGINES["vllm"].prequantized[:2],
    launch=ENGINES["vllm"].launch.replace("utilization 0.92", "utilization 0.9"),
    disaggregation=False,
    prefix_caching=False,
    attention_dp_flags=(),
    rank_limits=False,
    # MLA ran as multi-head attention before 0.7.1 (vLLM 0.7.1 notes; Red Hat, 2025-02-04:
    # 3.4x the generation throughput with MLA on 8 x H200); FlashMLA's decode from 0.8.0
    early_mla=True,
)
RELEASES: dict[str, EngineProfile] = {
    "vllm@0.6": replace(
        _VLLM_V0,
        id="vllm@0.6",
        version="0.6.4",
        image="vllm/vllm-openai:v0.6.4",
        source="vllm-project/vllm v0.6 vllm/engine/arg_utils.py (EngineArgs defaults)",
        as_of="2024-11",
        speculative=frozenset({"ngram"}),
    ),
    # vLLM 0.7.3 (PyPI 2025-02-20), the last release of the V0 engine by default (0.8.0 made
    # V1 the default, vllm#13726): vllm/engine/arg_utils.py gpu_memory_utilization 0.90,
    # max_num_seqs 256; vllm/config.py: "MLA is enabled; forcing chunked prefill and prefix
    # caching to be disabled", so a DeepSeek-class prompt is prefilled whole; its default
    # max_num_batched_tokens (2048 for a context past 32K) refused longer prompts until
    # vllm#13620, so the launch raises it to the context; MLA prefill through FlashAttention
    # 3 (#12807); DeepSeek's MTP drafter (#12755)
    "vllm@0.7": replace(
        _VLLM_V0,
        id="vllm@0.7",
        version="0.7.3",
        launch=_VLLM_V0.launch.replace(
            "--max-num-seqs", "--max-num-batched-tokens {max_len} --max-num-seqs"
        ),
        image="vllm/vllm-openai:v0.7.3",
        source="vllm-project/vllm v0.7.3 (PyPI, 2025-02-20) vllm/engine/arg_utils.py, "
        "vllm/config.py (MLA: chunked prefill and prefix caching disabled); vllm#13620",
        as_of="2025-02",
        speculative=frozenset({"mtp", "ngram"}),
    ),
    # SGLang 0.4.3.post2 (PyPI 2025-02-17; its defaults as 0.4.1's): sglang/srt/
    # server_args.py mem_fraction_static 0.81 at tp_size >= 8 (the DeepSeek-class replica
    # this release is asked for), chunked_prefill_size 8192, cuda_graph_max_bs 160,
    # max_running_requests from the pool; model_runner.py "MLA optimization is turned on.
    # Use triton backend." (FlashMLA and FA3 from 0.4.4.post2, 2025-03-27); data-parallel
    # attention (--enable-dp-attention --dp), NEXTN (MTP) drafting; no disaggregation
    "sglang@0.4.3": replace(
        ENGINES["sglang"],
        id="sglang@0.4.3",
        version="0.4.3.post2",
        memory_fraction=0.81,
        formats=frozenset({"fp8", "int8", "int4"}),
        format_capability=(("fp8", 8.0),),
        prequantized=ENGINES["sglang"].prequantized[:2],
        image="lmsysorg/sglang:v0.4.3.post2-cu125",
        source="sgl-project/sglang v0.4.3.post2 (PyPI, 2025-02-17) sglang/srt/server_args.py, "
        "sglang/srt/model_executor/model_runner.py (Triton MLA backend)",
        as_of="2025-02",
        disaggregation=False,
        speculative=frozenset({"mtp"}),
        attention_dp_flags=("--tp {tp}", "--tp {tp} --dp {tp} --enable-dp-attention"),
        early_mla=True,
    ),
}


def engine_profile(engine_id: str) -> EngineProfile:
    """An engine's profile, or a release's (:data:`RELEASES`), by its id."""
    return RELEASES.get(engine_id) or ENGINES[engine_id]


#: Every profile ``--engine`` names: the engines, then their releases
PROFILES: tuple[EngineProfile, ...] = (*ENGINES.values(), *RELEASES.values())
ENGINE_IDS: tuple[str, ...] = tuple(p.id for p in PROFILES)
