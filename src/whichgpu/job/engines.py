"""Serving engines as named profiles: how each lays out GPU memory, how many sequences it
batches, how it splits a model over GPUs, which weight formats it runs, and how it is
launched. ``--engine vllm`` plans a service as vLLM runs it by default.

Each profile cites the engine's own source or docs at the version it was read at. Speed is
not typed in here: an engine runs at the calibrated serving roofline (TensorRT-LLM's
published runs, :mod:`whichgpu.estimate.efficiency`) plus what was fitted on that
engine's published maximum-load runs: its host time per running sequence in a decode step
(:func:`sequence_s`; validation/published_serving.csv → ``scripts/fit_frameworks.py`` →
``catalog/data/framework_efficiency.csv``), where two sources or more have them and the time
fitted on the others predicts each (:func:`accuracy.published_serving.
fit_sequence_times`). TensorRT-LLM has none: the roofline is fitted on its runs.
"""

from __future__ import annotations

from whichgpu.job.engine_profile import EngineProfile, KvPool, Split

__all__ = [
    "DEFAULT_ENGINE",
    "ENGINES",
    "ENGINE_IDS",
    "REFERENCE_ENGINE",
    "EngineProfile",
    "KvPool",
    "Split",
]

#: Weight formats by the engine's quantization names (whichgpu's ``--quant`` values).
ALL_GPU_FORMATS = frozenset({"fp8", "int8", "int4"})
GGUF_FORMATS = frozenset({"q8_0", "q6_k", "q5_k_m", "q4_k_m", "q4_0", "q3_k_m", "q2_k"})


ENGINES: dict[str, EngineProfile] = {
    # vLLM 0.33.0 (vllm/config/cache.py, config/scheduler.py, engine/arg_utils.py
    # get_batch_defaults): gpu_memory_utilization 0.92 of total memory (0.90 before), block
    # 16, max_num_seqs 256 and max_num_batched_tokens 2048 for `vllm serve` below 70 GiB or
    # on an A100, 1024 and 8192 on H100/H200-class cards, 16384 from 160 GiB; chunked
    # prefill and prefix caching on; fp8 (Marlin weight-only below SM89), AWQ/GPTQ; GGUF
    # and bitsandbytes removed in 0.33 (vllm#39583); one decode step a scheduler pass (the
    # V1 engine has no --num-scheduler-steps). Serving (docs.vllm.ai, "vllm serve",
    # "Quantization"): `--quantization fp8` quantizes a 16-bit checkpoint as it loads; INT4
    # (AWQ, GPTQ) and INT8 (W8A8, llm-compressor) are pre-quantized checkpoints whose
    # method vLLM reads from their config; --host/--port (8000).
    "vllm": EngineProfile(
        "vllm",
        "vLLM",
        harness="trtllm",
        split="tensor",
        kv_pool="total",
        memory_fraction=0.92,
        block_tokens=16,
        max_sequences=256,
        prefill_chunk_tokens=2048,
        continuous_batching=True,
        formats=frozenset({"fp8", "int8", "int4", "mxfp4", "nvfp4"}),
        launch=(
            "vllm serve {model} --tensor-parallel-size {tp} --max-model-len {max_len} "
            "--gpu-memory-utilization 0.92 --max-num-seqs {sequences} "
            "--host 0.0.0.0 --port {port}{quant}"
        ),
        # the release it is planned as (Docker Hub's vllm/vllm-openai tags each release
        # v<version>): a deployment runs what was sized, not whatever `latest` is that day
        image="vllm/vllm-openai:v0.33.0",
        # docs.vllm.ai installation, GPU, ROCm: "available on Docker Hub as vllm-openai-rocm"
        rocm_image="vllm/vllm-openai-rocm:latest",
        quant_flags=(("fp8", " --quantization fp8"),),
        # docs.vllm.ai "Quantized KV Cache": --kv-cache-dtype fp8 (E4M3, per-tensor scales)
        kv_flags=(("fp8", " --kv-cache-dtype fp8"),),
        prequantized=(
            ("int4", "an AWQ or GPTQ INT4 checkpoint"),
            ("int8", "an INT8 W8A8 checkpoint"),
            ("mxfp4", "an MXFP4 checkpoint (gpt-oss's own)"),
            ("nvfp4", "an NVFP4 checkpoint from TensorRT Model Optimizer"),
        ),
        source="vllm-project/vllm 0.33.0 (wheel, commit 4ba787ec9) vllm/config/cache.py, "
        "config/scheduler.py, engine/arg_utils.py, model_executor/layers/quantization; "
        "vllm-project/recipes OpenAI/GPT-OSS.md (MXFP4 experts: H100, H200, B200, MI300X, "
        "MI325X, MI355X; Ampere through Marlin MXFP4 MoE)",
        as_of="2026-11",
        version="0.33.0",
        disaggregation=True,
        prefix_caching=True,
        speculative=frozenset({"eagle3", "mtp", "ngram"}),
        # docs.vllm.ai "Data Parallel Deployment" and the DeepSeek recipe's DP8+EP
        attention_dp_flags=(
            "--tensor-parallel-size {tp}",
            "--data-parallel-size {tp} --enable-expert-parallel",
        ),
        rank_limits=True,
        large_gpu=(70.0, 9.0, 1024, 8192),
        format_capability=(("fp8", 8.0), ("mxfp4", 8.0), ("nvfp4", 8.0)),
    ),
    # SGLang 0.5.23 (sglang/srt/server_args.py, arg_groups/): mem_fraction_static computed
    # as (weights + KV pool) / memory after an activation and CUDA-graph reserve (≈ 0.9 on
    # 80–141 GB cards), page_size 1, chunked_prefill_size 8192 on H100/H200, the radix
    # prefix cache on, max_running_requests from the pool. docs.sglang.io "Quantization":
    # online `--quantization fp8` on a 16-bit checkpoint; GPTQ/AWQ and INT8 are offline
    # (pre-quantized) checkpoints, the method read from their config; "Server Arguments":
    # --host/--port (30000).
    "sglang": EngineProfile(
        "sglang",
        "SGLang",
        harness="trtllm",
        split="tensor",
        kv_pool="total",
        memory_fraction=0.88,
        block_tokens=1,
        max_sequences=1024,
        prefill_chunk_tokens=8192,
        decodes_in_budget=False,
        continuous_batching=True,
        formats=frozenset({"fp8", "int8", "int4", "nvfp4"}),
        launch=(
            "python -m sglang.launch_server --model-path {model} --tp {tp} "
            "--context-length {max_len} --max-running-requests {sequences} "
            "--host 0.0.0.0 --port {port}{quant}"
        ),
        # the release it is planned as: SGLang's release workflow (.github/workflows/
        # release-docker.yml, create-manifests) tags each release's multi-arch image
        # v<version>, and points latest at it until the next one
        image="lmsysorg/sglang:v0.5.23",
        port=30000,
        quant_flags=(("fp8", " --quantization fp8"),),
        # server_args.py --kv-cache-dtype: auto, fp8_e5m2, fp8_e4m3
        kv_flags=(("fp8", " --kv-cache-dtype fp8_e4m3"),),
        prequantized=(
            ("int4", "an AWQ or GPTQ INT4 checkpoint"),
            ("int8", "an INT8 W8A8 checkpoint"),
            ("nvfp4", "an NVFP4 checkpoint from TensorRT Model Optimizer"),
        ),
        source="sgl-project/sglang 0.5.23 (wheel) sglang/srt/server_args.py, arg_groups; "
        "sglang/srt/layers/quantization/marlin_utils_fp8.py (FP8 without FP8 tensor cores: "
        "weight-only through gptq_marlin_gemm, Marlin's SM 8.0 floor)",
        as_of="2026-11",
        version="0.5.23",
        disaggregation=True,
        prefix_caching=True,
        speculative=frozenset({"eagle3", "mtp", "ngram"}),
        # docs.sglang.io DeepSeek V3.2: "--tp 8 --dp 8 --enable-dp-attention" (TP + DP);
        # "Expert Parallelism": --ep-size splits the MoE's tensor-parallel ranks into EP groups
        attention_dp_flags=(
            "--tp {tp}",
            "--tp {tp} --dp {tp} --enable-dp-attention --ep-size {tp}",
        ),
        format_capability=(("fp8", 8.0), ("nvfp4", 10.0)),
    ),
    # TensorRT-LLM LLM API / trtllm-serve (tensorrt_llm/llmapi/llm_args.py @0004396,
    # commands/serve.py @00209af): KvCacheConfig free_gpu_memory_fraction 0.9 of the memory
    # free after weights and buffers, tokens_per_block 32, max_batch_size 2048,
    # max_num_tokens 8192, in-flight batching, chunked prefill off, KV block reuse on
    # (llmapi KvCacheConfig enable_block_reuse=True, 1.4 docs); the KV cache in the
    # checkpoint's dtype (kv_cache_config dtype "auto"): FP8 for a TensorRT Model Optimizer
    # FP8 checkpoint, whose hf_ptq.py quantizes the KV cache to FP8 unless told not to
    # (--kv_cache_qformat, default fp8; v0.14's perf overview: "If you specify FP8
    # quantization, the KV cache will automatically be set to FP8 as well"); FP8 on Ada/Hopper/
    # Blackwell, W4A16 AWQ/GPTQ, NVFP4 on Blackwell only (docs/source/features/quantization.md:
    # the PyTorch backend loads checkpoints quantized by TensorRT Model Optimizer, it has no
    # flag that quantizes a 16-bit one); trtllm-serve --host/--port (8000).
    "trtllm": EngineProfile(
        "trtllm",
        "TensorRT-LLM",
        harness="trtllm",
        split="tensor",
        kv_pool="free",
        memory_fraction=0.90,
        block_tokens=32,
        max_sequences=2048,
        prefill_chunk_tokens=0,
        step_token_limit=8192,
        continuous_batching=True,
        formats=frozenset({"fp8", "int8", "int4", "nvfp4"}),
        launch=(
            "trtllm-serve {model} --tp_size {tp} --max_seq_len {max_len} "
            "--max_batch_size {sequences} --max_num_tokens {step_tokens} "
            "--kv_cache_free_gpu_memory_fraction 0.9 "
            "--host 0.0.0.0 --port {port}"
        ),
        image="nvcr.io/nvidia/tensorrt-llm/release:latest",
        prequantized=(
            ("fp8", "an FP8 checkpoint from TensorRT Model Optimizer"),
            ("int8", "an INT8 checkpoint from TensorRT Model Optimizer"),
            ("int4", "an INT4 AWQ checkpoint from TensorRT Model Optimizer"),
            ("nvfp4", "an NVFP4 checkpoint from TensorRT Model Optimizer"),
        ),
        cuda_only=True,
        format_capability=(("fp8", 8.9), ("nvfp4", 10.0)),
        checkpoint_kv=(("fp8", "fp8"), ("nvfp4", "fp8")),
        # docs/source/supported-hardware (and the 0.18 support matrix): Blackwell, Hopper,
        # Ada Lovelace and Ampere (SM80/86); an architecture not listed is not tested
        min_capability=8.0,
        # llm_args.py KvCacheConfig.dtype: "auto" follows the checkpoint, a dtype forces it
        kv_flags=(("fp8", "fp8"), ("bf16", "bfloat16"), ("fp16", "float16")),
        kv_in_options=True,
        source="NVIDIA/TensorRT-LLM tensorrt_llm/llmapi/llm_args.py @0004396, "
        "commands/serve.py @00209af, docs/source/features/quantization.md @09d4c79, "
        "docs/source/deployment-guide/quick-start-recipe-for-llama3.3-70b-on-trtllm.md "
        "@0f34bf0 (kv_cache_config dtype: auto, the checkpoint's); NVIDIA/TensorRT-Model-"
        "Optimizer examples/llm_ptq/hf_ptq.py @42bb023 (--kv_cache_qformat default fp8)",
        as_of="2026-11",
        version="main @0004396",
        disaggregation=True,
        prefix_caching=True,
        speculative=frozenset({"eagle3", "mtp", "ngram"}),
        # examples/serve/deepseek_r1_reasoning_parser.sh: enable_attention_dp in the options
        # file, --tp_size 8 --ep_size 8
        attention_dp_flags=("--tp_size {tp}", "--tp_size {tp} --ep_size {tp}"),
        attention_dp_option="enable_attention_dp: true",
        rank_limits=True,
    ),
    # TGI v3.3.7 (launcher/src/main.rs @db931fc, server/.../flash_causal_lm.py warmup):
    # cuda_memory_fraction 1.0 with a 0.90 wiggle room when the KV pool is sized, block 1
    # (flashinfer), max_concurrent_requests 128, max_batch_prefill_tokens 4096, chunked
    # prefill and prefix caching on, --num-shard tensor parallelism; in maintenance mode.
    # The image's entrypoint is text-generation-launcher (docs "Quick Tour" run it with
    # `docker run … --model-id`; a Kubernetes pod runs the launcher itself); "Quantization":
    # bitsandbytes (8-bit), bitsandbytes-nf4 and fp8 quantize as the weights load, AWQ/GPTQ
    # need pre-quantized weights; launcher --hostname/--port.
    "tgi": EngineProfile(
        "tgi",
        "Text Generation Inference",
        harness="trtllm",
        split="tensor",
        kv_pool="total",
        memory_fraction=0.90,
        block_tokens=1,
        max_sequences=128,
        prefill_chunk_tokens=4096,
        continuous_batching=True,
        formats=frozenset({"fp8", "int8", "int4", "nf4"}),
        launch=(
            "text-generation-launcher --model-id {model} --num-shard {tp} "
            "--max-total-tokens {max_len} --max-concurrent-requests {sequences} "
            "--hostname 0.0.0.0 --port {port}{quant}"
        ),
        # the release it is planned as (its images are tagged <version>: 3.3.7)
        image="ghcr.io/huggingface/text-generation-inference:3.3.7",
        port=8080,
        quant_flags=(
            ("fp8", " --quantize fp8"),
            ("int8", " --quantize bitsandbytes"),
            ("nf4", " --quantize bitsandbytes-nf4"),
        ),
        # launcher --kv-cache-dtype: fp8_e4m3fn, fp8_e5m2
        kv_flags=(("fp8", " --kv-cache-dtype fp8_e4m3fn"),),
        prequantized=(("int4", "an AWQ or GPTQ INT4 checkpoint"),),
        host_docker=True,
        source="huggingface/text-generation-inference @db931fc (v3.3.7) launcher/src/main.rs, "
        "server/text_generation_server/models/globals.py; its kernels' build "
        "(kernels-community/quantization build.toml: fp8 and gptq Marlin built for CUDA "
        "capabilities 8.0 to 12.0)",
        as_of="2026-11",
        version="3.3.7",
        prefix_caching=True,
        speculative=frozenset({"ngram"}),
        format_capability=(("fp8", 8.0),),
    ),
    # llama.cpp llama-server (tools/server/server.cpp @00dd081, common/common.h @001d906):
    # -np auto = 4 slots on a unified KV cache, -c 0 = the model's context, --split-mode
    # layer across GPUs, continuous batching on; GGUF weights. tools/server/README.md: -c is
    # the whole KV cache, shared by the -np slots (each gets c / np), -hf <user>/<model>
    # [:quant] downloads a GGUF from the Hub (-m takes a local file), --host/--port (8080);
    # the server-cuda image holds /app/llama-server (.devops/cuda.Dockerfile).
    "llama.cpp": EngineProfile(
        "llama.cpp",
        "llama.cpp",
        harness="llamacpp",
        split="layers",
        kv_pool="context",
        memory_fraction=1.0,
        block_tokens=0,
        max_sequences=4,
        prefill_chunk_tokens=2048,
        continuous_batching=True,
        formats=GGUF_FORMATS | {"fp16"},
        launch=(
            "llama-server -hf {model} -ngl 99 -c {context} -np {sequences} "
            "--host 0.0.0.0 --port {port}"
        ),
        image="ghcr.io/ggml-org/llama.cpp:server-cuda",
        port=8080,
        gguf_name="<user>/<repo>-GGUF:{tag}",
        image_dir="/app/",
        source="ggml-org/llama.cpp tools/server/server.cpp @00dd081, common/common.h @001d906",
        as_of="2026-11",
        version="@00dd081",
    ),
    # Ollama v0.33.0-rc2 (@fb30760 envconfig/config.go, llm/llama_server.go): llama-server
    # underneath, OLLAMA_NUM_PARALLEL 1 (since #11330), layers spread across GPUs when the
    # model does not fit one, q4_K_M library tags. docs/faq.md: OLLAMA_HOST sets the
    # server's address (11434), OLLAMA_CONTEXT_LENGTH is a sequence's context (memory scales
    # with OLLAMA_NUM_PARALLEL × it); `ollama pull` fetches a model (a library tag or
    # hf.co/<user>/<repo>:<quant>) through the running server.
    "ollama": EngineProfile(
        "ollama",
        "Ollama",
        harness="llamacpp",
        split="layers",
        kv_pool="context",
        memory_fraction=1.0,
        block_tokens=0,
        max_sequences=1,
        prefill_chunk_tokens=512,
        continuous_batching=True,
        formats=GGUF_FORMATS | {"fp16"},
        launch=(
            "OLLAMA_HOST=0.0.0.0:{port} OLLAMA_NUM_PARALLEL={sequences} "
            "OLLAMA_CONTEXT_LENGTH={max_len} ollama serve & "
            "until OLLAMA_HOST=127.0.0.1:{port} ollama list >/dev/null 2>&1; do sleep 1; done; "
            "OLLAMA_HOST=127.0.0.1:{port} ollama pull {model} || kill $!; wait"
        ),
        image="ollama/ollama:latest",
        port=11434,
        gguf_name="hf.co/<user>/<repo>-GGUF:{tag}",
        source="ollama/ollama @fb30760 (v0.33.0-rc2) envconfig/config.go, llm/llama_server.go",
        as_of="2026-11",
        version="0.33.0-rc2",
    ),
    # transformers 5.24 generate(): static batching (a batch runs until its longest
    # sequence ends), a contiguous KV cache, device_map="auto" splits layers; bitsandbytes,
    # GPTQ, AWQ, FP8 weights (generation/utils.py, integrations/accelerate.py). Served by
    # `transformers serve <model>` (cli/serve.py: an OpenAI-compatible server, device auto,
    # static batching unless --continuous-batching; --quantization bnb-4bit/bnb-8bit
    # quantize as the weights load, other formats are pre-quantized checkpoints; --host/--port).
    "transformers": EngineProfile(
        "transformers",
        "Hugging Face transformers generate()",
        harness="trtllm",
        split="layers",
        kv_pool="context",
        memory_fraction=1.0,
        block_tokens=0,
        max_sequences=64,
        prefill_chunk_tokens=0,
        continuous_batching=False,
        formats=frozenset({"int8", "int4", "nf4", "fp8"}),
        launch="transformers serve {model} --host 0.0.0.0 --port {port}{quant}",
        image="nvcr.io/nvidia/pytorch:24.10-py3",
        quant_flags=(("int8", " --quantization bnb-8bit"), ("nf4", " --quantization bnb-4bit")),
        prequantized=(("int4", "an AWQ or GPTQ INT4 checkpoint"), ("fp8", "an FP8 checkpoint")),
        # generate() measured on an H200 (validation/measured_transformers.csv: Llama 3.2 1B
        # to Qwen2.5 14B, 1 to 64 sequences): 0.93 to 1.35 ms a layer whatever the batch, the
        # GPU idle between Python's launches; the median of seven runs, a VM's Xeon's speed.
        host_layer_s=1.12e-3,
        source="huggingface/transformers 5.24.0 generation/utils.py, integrations/accelerate.py, "
        "cli/serve.py; validation/measured_transformers.csv (H200, transformers 5.17.0)",
        as_of="2026-11",
        version="5.24.0",
    ),
}
ENGINE_IDS: tuple[str, ...] = tuple(ENGINES)
#: The engine the answer names where a format runs on none searched: the most deployed
DEFAULT_ENGINE = "vllm"

#: The engine the serving roofline is calibrated on (its η is TensorRT-LLM's): its host
#: work is in the calibration, so it has no fitted per-sequence time
REFERENCE_ENGINE = "trtllm"
