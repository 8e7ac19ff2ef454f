"""Releases of an engine a user may ask for by id (``--engine vllm@0.6``): the engine's
profile at that release's defaults, its speed its engine's (the serving roofline and the
host time fitted on that engine's runs: :mod:`whichgpu.job.engine_times`). The search never
plans a release by itself; it is planned where it is named."""

from __future__ import annotations

from dataclasses import replace

from whichgpu.job.engines import ENGINES, EngineProfile

#: vLLM's V0 engine of the 0.6 series, which the published 2024-25 vLLM runs ran
#: (vllm-project/vllm v0.6 vllm/engine/arg_utils.py: gpu_memory_utilization 0.9, "If
#: unspecified, will use the default value of 0.9", max_num_seqs 256; chunked prefill on by
#: default only past a 32K context, prefix caching off; no data-parallel attention, no
#: disaggregated serving, n-gram speculation)
RELEASES: dict[str, EngineProfile] = {
    "vllm@0.6": replace(
        ENGINES["vllm"],
        id="vllm@0.6",
        version="0.6.4",
        memory_fraction=0.90,
        prefill_chunk_tokens=0,
        large_gpu=None,
        formats=frozenset({"fp8", "int8", "int4"}),
        format_capability=(("fp8", 8.0),),
        prequantized=ENGINES["vllm"].prequantized[:2],
        launch=ENGINES["vllm"].launch.replace("utilization 0.92", "utilization 0.9"),
        image="vllm/vllm-openai:v0.6.4",
        source="vllm-project/vllm v0.6 vllm/engine/arg_utils.py (EngineArgs defaults)",
        as_of="2024-11",
        disaggregation=False,
        prefix_caching=False,
        speculative=frozenset({"ngram"}),
        attention_dp_flags=(),
        rank_limits=False,
    )
}


def engine_profile(engine_id: str) -> EngineProfile:
    """An engine's profile, or a release's (:data:`RELEASES`), by its id."""
    return RELEASES.get(engine_id) or ENGINES[engine_id]


#: Every profile ``--engine`` names: the engines, then their releases
PROFILES: tuple[EngineProfile, ...] = (*ENGINES.values(), *RELEASES.values())
ENGINE_IDS: tuple[str, ...] = tuple(p.id for p in PROFILES)
