"""Serving lengths as users name them: a dataset's mean tokens in and out, as the benchmarks
that serve it report them. The serving planner sees every request at the means (its queueing
model is of means, :mod:`whichgpu.estimate.serving_plan`); a preset says where its figures
come from, so the answer can. A dataset's outputs spread about their mean, which a finite run
of its requests pays for as it drains (:mod:`whichgpu.estimate.burst`: exponential lengths up
to the longest the dataset keeps)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from whichgpu.notes import Note


@dataclass(frozen=True)
class Lengths:
    id: str
    name: str
    #: Mean tokens a request's prompt holds, and mean tokens generated
    prompt: int
    generate: int
    source: str
    as_of: str
    #: The most tokens a request generates: what the benchmark's sampler keeps
    longest: int


LENGTHS: dict[str, Lengths] = {
    # vllm-project/vllm#9476 (Stas Bekman, vLLM 0.6.2): benchmark_serving.py --dataset-name
    # sharegpt --num-prompts 2000 (ShareGPT_V3_unfiltered_cleaned_split, Llama 3's
    # tokenizer): "Total input tokens: 453502", "Total generated tokens: 377235"; SGLang's run
    # of the same 2,000 prompts (sgl-project/sglang#1639) reads 227 and 188
    "sharegpt": Lengths(
        "sharegpt",
        "ShareGPT",
        227,
        189,
        "vllm-project/vllm#9476: 453,502 tokens in and 377,235 out over 2,000 ShareGPT prompts",
        "2024-10",
        # vLLM's benchmark sampler (benchmarks/benchmark_serving.py, sample_sharegpt_requests)
        # drops a pair "if prompt_len > 1024 or prompt_len + output_len > 2048": 2,048 less
        # the mean prompt
        2048 - 227,
    ),
    # MLPerf Inference Llama 2 70B (OpenOrca, MLCommons' processorca.py --seqlen_limit=1024):
    # reference README "Tokens per sample: 294.45"; inputs' mean 222.33 over the 24,576
    # samples (the tok_input_length column of open_orca_gpt4_tokenized_llama.sampled_24576)
    "openorca": Lengths(
        "openorca",
        "OpenOrca (MLPerf Llama 2 70B)",
        222,
        294,
        "MLCommons inference, language/llama2-70b: 294.45 tokens out a sample; 222.33 in",
        "2024-08",
        1024,  # processorca.py's --seqlen_limit=1024
    ),
}
LENGTH_IDS: tuple[str, ...] = tuple(LENGTHS)
#: The generated tokens a request asks for where nothing sets them
DEFAULT_GENERATE = 256


def apply_lengths(
    lengths: str | None, prompt: int, generate: int, path: tuple[str | int, ...] = ()
) -> tuple[int, int]:
    """``prompt`` and ``generate`` as ``lengths`` sets them (its means), or as given where no
    preset is named; a preset and tokens given too is one clear error (which would win?)."""
    if lengths is None:
        return prompt, generate
    from whichgpu.errors import InvalidInput, Ref

    preset = LENGTHS[lengths]
    if prompt or generate != DEFAULT_GENERATE:
        raise InvalidInput(
            "lengths_and_tokens",
            field=(*path, "lengths"),
            prompt_field=Ref((*path, "prompt")),
            generate_field=Ref((*path, "generate")),
            name=preset.name,
            prompt=preset.prompt,
            generate=preset.generate,
        )
    return preset.prompt, preset.generate


def lengths_note(component: str, lengths: str) -> Note:
    """What a named dataset set: its mean lengths and where they come from."""
    from whichgpu.notes import note

    preset = LENGTHS[lengths]
    return note("chosen_lengths", component=component, name=preset.name, prompt=preset.prompt,
                generate=preset.generate, source=preset.source, as_of=preset.as_of)  # fmt: skip
