"""A serving engine's profile: the type every engine and release in
:mod:`whichgpu.job.engines` and :mod:`whichgpu.job.engine_releases` is, what each field
means and cites, and what a profile answers of a job (its KV cache as the engine takes it,
its launch flags, its limits on a GPU). The engines themselves, each read from its own
source, are :data:`whichgpu.job.engines.ENGINES`.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from whichgpu.catalog.records import GPU
    from whichgpu.job import Job, KvDtype
    from whichgpu.notes import Note

#: How an engine spreads one model over several GPUs: ``tensor`` (Megatron-style tensor
#: parallelism: each GPU holds a slice of every layer and they all-reduce twice a layer) or
#: ``layers`` (each GPU holds whole layers, which run one after another: no speedup).
Split = Literal["tensor", "layers"]
#: How the KV-cache pool is sized: ``total`` (a fraction of the GPU's memory, from which
#: the weights and the profiled activations are taken: vLLM, SGLang, TGI) or ``free`` (a
#: fraction of what is free once the weights are loaded: TensorRT-LLM), or ``context``
#: (a fixed context per parallel slot: llama.cpp, Ollama, transformers).
KvPool = Literal["total", "free", "context"]


@dataclass(frozen=True)
class EngineProfile:
    id: str
    name: str
    #: The harness whose calibrated efficiency this engine starts from
    harness: str
    split: Split
    kv_pool: KvPool
    #: The fraction of memory ``kv_pool`` takes (vLLM's gpu_memory_utilization …)
    memory_fraction: float
    #: Tokens per KV-cache block (paging granularity; 0: one contiguous cache a sequence)
    block_tokens: int
    #: The most sequences batched at once by default
    max_sequences: int
    #: Tokens a scheduler step prefills at most (chunked prefill); 0: whole prompts
    prefill_chunk_tokens: int
    #: Iteration-level scheduling (Yu et al., 2022, "Orca"): a finished sequence's slot is
    #: refilled at the next step; without it a batch runs to its longest sequence's end
    continuous_batching: bool
    formats: frozenset[str]
    #: The server's command line (a process that serves until stopped), with {model},
    #: {tp}, {max_len} (tokens a sequence), {context} (tokens over all the sequences),
    #: {step_tokens} (the tokens a step holds: :attr:`step_token_limit`, or a whole prompt
    #: where it is longer),
    #: {sequences}, {port} and {quant} placeholders
    launch: str
    #: The container image the engine's docs deploy it with
    image: str
    source: str
    as_of: str
    #: Its ROCm image for AMD Instinct GPUs, where its docs name one ("" where not)
    rocm_image: str = ""
    #: The release (or commit) whose defaults the profile reads, named in the answer
    version: str = ""
    #: The port the server listens on by default; replicas on one node take the next ones
    port: int = 8000
    #: The flag that quantizes the 16-bit checkpoint as it loads, per weight format
    quant_flags: tuple[tuple[str, str], ...] = ()
    #: The checkpoint a weight format needs where the engine does not quantize a 16-bit one
    #: as it loads (AWQ/GPTQ INT4 and the like are calibrated offline), per format; a
    #: format in neither table needs "a <format> checkpoint"
    prequantized: tuple[tuple[str, str], ...] = ()
    #: Serves GGUF files only: how a GGUF checkpoint is named to it, with a {tag}
    #: placeholder for the file's quantization (empty: not a GGUF engine)
    gguf_name: str = ""
    #: Where the launch's program lies in :attr:`image` when not on its PATH
    image_dir: str = ""
    #: Runs on a host from its image (``docker run``), as the engine's docs deploy it there
    host_docker: bool = False
    #: Tokens a scheduler step holds at most where prompts run whole (no chunked prefill):
    #: TensorRT-LLM's ``max_num_tokens``, 8,192; 0: no limit but the batch. Under chunked
    #: prefill the chunk is the step's budget
    step_token_limit: int = 0
    #: A step's token budget holds the running sequences' decode tokens beside new prompts'
    #: (vLLM's V1 scheduler schedules the running requests first, from the same
    #: max_num_batched_tokens; TensorRT-LLM's max_num_tokens counts generation tokens);
    #: False where prompts run in prefill batches of their own (SGLang's scheduler, without
    #: --enable-mixed-chunk)
    decodes_in_budget: bool = True
    #: A higher tier for large GPUs: (GiB at least, compute capability at least, sequences,
    #: prefill chunk tokens), vLLM's get_batch_defaults
    large_gpu: tuple[float, float, int, int] | None = None
    #: Runs on NVIDIA GPUs only (TensorRT-LLM is CUDA-only); the others have ROCm builds
    #: for AMD Instinct GPUs (vLLM's and SGLang's ROCm images, TGI's ROCm image, llama.cpp's
    #: HIP backend, Ollama's ROCm build, PyTorch for ROCm)
    cuda_only: bool = False
    #: The compute capability a weight format needs on an NVIDIA GPU, where the engine's
    #: docs or code set one (vLLM's FP8 and NVFP4 Marlin kernels from SM 8.0, TensorRT-LLM's
    #: FP8 from Ada; NVFP4 tensor cores, SGLang's ``ModelOptFp4Config``: SM 10.0, Blackwell)
    format_capability: tuple[tuple[str, float], ...] = ()
    #: The lowest NVIDIA compute capability the engine supports at all (TensorRT-LLM: Ampere)
    min_capability: float = 0.0
    #: Host seconds a forward pass spends per layer where the engine launches each kernel
    #: from Python (eager PyTorch, no CUDA graphs): a decode step or a prefill takes at
    #: least ``layers × host_layer_s``, however little the GPU has to do (0: the engine
    #: replays CUDA graphs or runs a C++ loop)
    host_layer_s: float = 0.0
    #: Decode steps one scheduler pass runs before it admits what arrived (vLLM 0.6 to
    #: 0.9's ``--num-scheduler-steps``, multi-step scheduling; gone with its V1 engine):
    #: an arrival waits for the window it lands in to end
    scheduler_steps: int = 1
    #: The KV-cache dtype the engine takes from a pre-quantized checkpoint, per weight
    #: format, where the user leaves the KV cache's dtype open (TensorRT-LLM's
    #: ``kv_cache_config.dtype`` "auto" is the checkpoint's ``kv_cache_quant_algo``, and
    #: TensorRT Model Optimizer's FP8 export writes an FP8 one by default)
    checkpoint_kv: tuple[tuple[str, KvDtype], ...] = ()
    #: The flag that sets the KV cache's dtype where the user set one the engine would not
    #: take by itself, per dtype; a dtype with none is one the engine cannot keep (llama.cpp's
    #: caches are f16 or its own q8_0/q4_0, not FP8). 16 bits are a 16-bit model's default
    kv_flags: tuple[tuple[str, str], ...] = ()
    #: The KV dtype goes in a ``--extra_llm_api_options`` YAML file (TensorRT-LLM's
    #: ``kv_cache_config.dtype``: "auto" follows the checkpoint, a dtype forces it), written
    #: before the server starts
    kv_in_options: bool = False
    #: Keeps the KV blocks of prompts' common starts for later requests, on by default
    #: (vLLM's automatic prefix caching, SGLang's radix cache, TensorRT-LLM's block reuse,
    #: TGI's prefix caching): a shared prefix is prefilled and held once
    prefix_caching: bool = False
    #: The speculative drafters the engine runs (vLLM's ``--speculative-config`` methods
    #: eagle3, deepseek_mtp and ngram; SGLang's EAGLE3, NEXTN for MTP, NGRAM; TensorRT-LLM's
    #: Eagle3, MTP and NGram decoding configs; TGI's ``--speculate`` n-gram)
    speculative: frozenset[str] = frozenset()
    #: Serves prefill and decode on separate workers, the KV cache moved between them
    #: (vLLM's KV connectors with NIXL, SGLang's ``--disaggregation-mode``, TensorRT-LLM's
    #: disaggregated serving; NVIDIA Dynamo and llm-d deploy all three so); how whichgpu
    #: writes a PD deployment: :data:`whichgpu.commands.pd_deploy.PD_LAUNCH`
    disaggregation: bool = False
    #: How a replica runs a mixture of experts with data-parallel attention and
    #: expert-parallel MoE: the tensor-parallel fragment of :attr:`launch` and what replaces
    #: it (both with {tp}), and a line for the options file where the engine reads it there
    #: (TensorRT-LLM's ``enable_attention_dp``); empty: the engine has no such layout
    attention_dp_flags: tuple[str, str] | tuple[()] = ()
    attention_dp_option: str = ""
    #: Data-parallel attention ranks cap their sequences apiece (vLLM's "Data Parallel
    #: Deployment": a DP rank is "a separate core engine process"; TensorRT-LLM's
    #: max_batch_size is a rank's, ai-dynamo/dynamo#11982): n GPUs hold n × max_sequences
    rank_limits: bool = False
    #: A release whose MLA attention and MoE kernels for DeepSeek-class models predate every
    #: build whichgpu's speeds for them rest on (multi-head attention in place of MLA, Triton
    #: MLA kernels, no CUDA graphs, untuned MoE kernels: docs/serving-accuracy.md, "DeepSeek
    #: on the engine builds of early 2025"): an MLA model's estimate on it is what today's
    #: kernels reach, its range widened to how far the early builds' published runs fell
    #: behind (:func:`~whichgpu.estimate.efficiency_model.early_build_band`)
    early_mla: bool = False

    def __hash__(self) -> int:
        """The dataclass hash of every field, computed once (as :class:`~whichgpu.job.Job`'s):
        an engine keys the serving planner's memos (its curves, capacities, KV pools),
        thousands of lookups a serving recommend, and it has some forty fields."""
        cached: int | None = self.__dict__.get("_hash")
        if cached is None:
            cached = hash(_field_values(self))
            object.__setattr__(self, "_hash", cached)
        return cached

    def served_job(self, job: Job) -> Job:
        """``job`` as this engine serves it: its KV cache in the checkpoint's dtype
        (:attr:`checkpoint_kv`) where the user left it open, no shared prefix where it
        keeps none (every prompt prefilled whole), and no speculative decoding where it has
        not the drafter asked for."""
        from whichgpu.frozen import evolve

        if job.speculative and job.speculative not in self.speculative:
            job = evolve(job, speculative=None, draft_tokens=0, acceptance=0.0)

        if job.shared_prefix:  # a prefix cache shares whole blocks only
            block = max(self.block_tokens, 1)
            shared = job.shared_prefix // block * block if self.prefix_caching else 0
            job = evolve(job, shared_prefix=shared)
        kv = dict(self.checkpoint_kv).get(job.quant or "")
        if kv is None or job.kv_dtype != "auto":
            return job
        return evolve(job, kv_dtype=kv)

    def parallel_launch(self, command: str, attention_dp: bool) -> str:
        """The launch command ``command`` with data-parallel attention's flags in place of
        tensor parallelism's, where the replica runs so (:attr:`attention_dp_flags`)."""
        if not attention_dp or not self.attention_dp_flags:
            return command
        tensor, data = self.attention_dp_flags
        return command.replace(tensor, data, 1)

    def keeps_kv(self, kv: str) -> bool:
        """Whether this engine keeps a KV cache of dtype ``kv`` (auto and 16 bits: all)."""
        return kv in ("auto", "fp16", "bf16") or kv in dict(self.kv_flags)

    def kv_launch(
        self, job: Job, port: int | None = None, options: tuple[str, ...] = ()
    ) -> tuple[str, str]:
        """What the launch command needs around it for ``job``'s KV cache (and data-parallel
        attention, where the engine reads it from its options file): a command to run
        before it and flags after it (nothing where the engine takes that dtype by itself:
        the model's 16 bits, or the checkpoint's). ``port``: the server's, which names its
        options file (replicas on one node write their own); ``options``: more of its lines
        (a disaggregated worker's KV transfer)."""
        flag, lines = self._kv_flag(job), self.option_lines(job, options)
        if not lines:
            return "", "" if self.kv_in_options else flag
        path = f"/tmp/whichgpu-kv-cache-{port or self.port}.yaml"
        text = "".join(f"{line}\\n" for line in lines)
        return f"printf '{text}' > {path} && ", f" --extra_llm_api_options {path}"

    def _kv_flag(self, job: Job) -> str:
        """The engine's name for ``job``'s KV-cache dtype where it must be asked for (""
        where the engine takes it by itself: the model's 16 bits, or the checkpoint's)."""
        default = dict(self.checkpoint_kv).get(job.quant or "", "auto")
        wanted = job.kv_dtype
        if wanted == default or (default == "auto" and wanted in ("auto", "fp16", "bf16")):
            return ""
        return dict(self.kv_flags).get(wanted, "")

    def option_lines(self, job: Job, options: tuple[str, ...] = ()) -> list[str]:
        """The lines of the engine's options file for ``job`` (its KV cache's dtype and
        data-parallel attention, where the engine reads them there), then ``options``."""
        flag = self._kv_flag(job)
        lines = ["kv_cache_config:", f"  dtype: {flag}"] if flag and self.kv_in_options else []
        if job.attention_dp and self.attention_dp_option:
            lines.append(self.attention_dp_option)
        return [*lines, *options]

    def kv_note(self, component: str, asked: Job, served: Job) -> tuple[Note, ...]:
        """What :meth:`served_job` chose, said: the KV cache's dtype where the engine took
        it from the checkpoint (nothing where the user set it or it is the model's)."""
        if served.kv_dtype == asked.kv_dtype:
            return ()
        from whichgpu.notes import note

        return (
            note(
                "chosen_kv_cache",
                component=component,
                engine=self.name,
                kv=served.kv_dtype.upper(),
                quant=(served.quant or "").upper(),
            ),
        )

    def gap(self, gpu: GPU, quant: str | None) -> tuple[str, float] | None:
        """What ``gpu`` lacks to run this engine with ``quant`` weights: ``("CUDA", 0)``
        for a CUDA-only engine on another vendor's GPU, ``("capability", needed)`` for a
        format an older NVIDIA GPU cannot run here, ``("engine", needed)`` for a GPU older
        than the engine supports at all; None where it runs."""
        if self.cuda_only and not gpu.cuda:
            return ("CUDA", 0.0)
        needed = dict(self.format_capability).get(quant or "")
        has = gpu.compute_capability
        if needed is not None and has is not None and float(has) < needed:
            return ("capability", needed)
        if gpu.cuda and has is not None and float(has) < self.min_capability:
            return ("engine", self.min_capability)
        return None

    def quantization(self, quant: str | None) -> tuple[str, str | None]:
        """How the server gets ``quant`` weights: the flag to add to :attr:`launch`, and the
        checkpoint it must load in place of the model's 16-bit one (None: that one)."""
        if self.gguf_name:  # a GGUF file per format, tagged as llama.cpp's quantize names it
            tag = (quant or "f16").upper()
            return "", f"a {tag} GGUF ({self.gguf_name.format(tag=tag)})"
        if quant is None:
            return "", None
        flag = dict(self.quant_flags).get(quant)
        if flag is not None:
            return flag, None
        return "", dict(self.prequantized).get(quant, f"a {quant.upper()} checkpoint")

    @property
    def labelled(self) -> str:  # "vLLM 0.33.0": the name and the version the profile reads
        return f"{self.name} {self.version}" if self.version else self.name

    def limits(self, gpu: GPU) -> tuple[int, int]:
        """The most sequences and the prefill chunk this engine defaults to on ``gpu``."""
        if self.large_gpu is not None:
            gib, capability, sequences, chunk = self.large_gpu
            if gpu.memory_gib >= gib and float(gpu.compute_capability or 0) >= capability:
                return sequences, chunk
        return self.max_sequences, self.prefill_chunk_tokens


_field_values = attrgetter(*EngineProfile.__dataclass_fields__)
