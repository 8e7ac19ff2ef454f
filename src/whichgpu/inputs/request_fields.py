"""The field rules several request types share (:mod:`whichgpu.inputs.requests`): each user
setting's kind, range or choices, help and CLI flag, declared once."""

from __future__ import annotations

from dataclasses import replace

from whichgpu.i18n import N_
from whichgpu.inputs import Input
from whichgpu.job import (
    ATTENTIONS,
    MEMORY_FORMATS,
    NETWORKS,
    OFFLOADS,
    OPTIMIZERS,
    PRECISIONS,
    QUANT_BITS,
    QUANTIZE_ONS,
    SPECULATIVE_METHODS,
)  # fmt: skip
from whichgpu.job.engine_releases import ENGINE_IDS
from whichgpu.job.length_presets import LENGTH_IDS
from whichgpu.job.recipes import FRAMEWORKS

MARKETS: tuple[str, ...] = ("on-demand", "spot", "marketplace", "serverless")
#: The markets an answer ranks in when the user names none
DEFAULT_MARKETS: tuple[str, ...] = ("on-demand", "marketplace")
QUANTS: tuple[str, ...] = tuple(QUANT_BITS)

MODEL = Input("text", N_("A preset (llama-3.1-8b…) or a config.json path."), short="-m")
PARAMS = Input("text", N_("A generic transformer of this size: 7B."), max_length=40)
PRECISION = Input(
    "choice",
    N_("32-true, 16-mixed, bf16-mixed, 16-true, bf16-true, tf32 or fp8-mixed."),
    choices=PRECISIONS,
)
#: A job's precision where none is given: what whichgpu.job.recipes.default_precision sets
CHOSEN_PRECISION = replace(
    PRECISION,
    help=N_(
        "32-true, 16-mixed, bf16-mixed, 16-true, bf16-true, tf32 or fp8-mixed (default: "
        "the framework's; else the HF Trainer's: bf16-mixed, or bf16-true for LoRA, "
        "QLoRA and inference; fp16 on GPUs without BF16)."
    ),
)
#: :data:`CHOSEN_PRECISION` where image generation is a task too (estimate)
CHOSEN_PRECISION_IMAGE = replace(
    PRECISION,
    help=N_(
        "32-true, 16-mixed, bf16-mixed, 16-true, bf16-true, tf32 or fp8-mixed (default: "
        "the framework's; else the HF Trainer's: bf16-mixed, or bf16-true for LoRA, "
        "QLoRA and inference; fp16 on GPUs without BF16; image generation: the "
        "pipeline's)."
    ),
)
QUANT = Input("choice", N_("Weights: int8, int4, nf4, fp8, q4_k_m…"), choices=QUANTS)
QUANTIZE_ON = Input(
    "choice",
    N_(
        "Where --quant's weights are made: load (as they are read: a quantization_config or "
        "quantised files; the default) or gpu (the 16-bit model moved to the GPU, then "
        "torchao's quantize_: the peak holds it whole)."
    ),
    choices=QUANTIZE_ONS,
)
BATCH = Input("int", N_("Sequences or images per step."), low=1, high=1_000_000)
SEQ = Input(
    "int",
    N_("Tokens per training sequence (default: the framework's, else 2048)."),
    low=1,
    high=10_000_000,
)
PROMPT = Input(
    "int", N_("Inference: prompt tokens (default: the sequence, else 512)."), low=0, high=10_000_000
)
GENERATE = Input("int", N_("Inference: generated tokens."), low=0, high=10_000_000)
SPECULATIVE = Input(
    "choice",
    N_(
        "Serving: speculative decoding's drafter: eagle3 (an EAGLE-3 head for the model), mtp "
        "(the model's own multi-token prediction, DeepSeek-V3/R1) or ngram (default: none)."
    ),
    choices=SPECULATIVE_METHODS,
)
#: How a served model's GPUs split their work (:mod:`whichgpu.estimate.disaggregated`)
SERVE_LAYOUTS = ("aggregated", "disaggregated")
SERVE_LAYOUT = Input(
    "choice",
    N_(
        "Serving: replicas that prefill and decode (aggregated), or separate prefill and "
        "decode workers, the KV cache moved between them (disaggregated: SGLang, vLLM, "
        "TensorRT-LLM) (default: chosen; separate workers only where they serve more at the "
        "slow end of their wider range)."
    ),
    choices=SERVE_LAYOUTS,
)
DRAFT_TOKENS = Input(
    "int", N_("Serving: tokens drafted a step (default: the drafter's, 3)."), low=1, high=16
)
ACCEPTANCE = Input(
    "number",
    N_(
        "Serving: tokens a verification step yields on average, its own included (the "
        "acceptance length; default: eagle3 2.08, mtp 2.18, ngram 2.37)."
    ),
    low=1.0,
    high=17.0,
)
SHARED_PREFIX = Input(
    "int",
    N_(
        "Serving: tokens at the start of every prompt that are the same for every request (a "
        "system prompt, few-shot examples), prefilled and held once by an engine's prefix "
        "cache (vLLM, SGLang, TensorRT-LLM and TGI keep one by default)."
    ),
    low=0,
    high=10_000_000,
)
CHECKPOINTING = Input("bool", N_("Full activation checkpointing."))
PACKING = Input(
    "bool",
    N_(
        "Fine-tuning: examples packed into full sequences, no padding (default: the "
        "framework's; the HF Trainer, TRL and torchtune pad each batch to its longest)."
    ),
)
#: The two settings a training job's search chooses when they are left open
#: (:mod:`whichgpu.plan.settings`), as every request that runs it words them
CHOSEN_CHECKPOINTING = replace(
    CHECKPOINTING,
    help=N_(
        "Full activation checkpointing (default: where it lets a faster micro-batch fit, or "
        "nothing fits without it)."
    ),
)
CHOSEN_BATCH = replace(
    BATCH,
    help=N_(
        "Sequences or images per GPU step (default: training takes the largest that fits, up "
        "to a recipe's; serving at a request rate the fewest in flight that sustain it; a "
        "decoder's tokens as many as the engine batches; else 1)."
    ),
)
TOKENS = Input("size", N_("Job size: tokens to train on or generate (1e9, 2B)."), low=1, high=1e18)
IMAGES = Input("size", N_("Job size: images per epoch."), low=1, high=1e15)
EPOCHS = Input(
    "number", N_("Training: passes over the data (--tokens or --images)."), low=1e-3, high=1e6
)
FRAMES = Input("size", N_("Render: frames to render."), low=1, high=1e9)
SCENE = Input(
    "number",
    N_(
        "Render: the scene's GPU memory in GiB, as Blender reports it (the status bar's "
        "peak while rendering); a GPU that cannot hold it is no option."
    ),
    low=0.001,
    high=1e5,
)
SAMPLES = Input("int", N_("Render: path-tracing samples per frame."), low=1, high=1_000_000)
TFLOP = Input("size", N_("FP64: work in TFLOP (1e6 = 1 EFLOP)."), low=1e-6, high=1e15)
RESOLUTION = Input(
    "int",
    N_("Image generation: pixels per side (default: the model's, 512 or 1024)."),
    low=64,
    high=8192,
)
STEPS = Input(
    "int", N_("Image generation: denoising steps (default: the pipeline's)."), low=1, high=1000
)
CPU_OFFLOAD = Input(
    "choice",
    N_("Image generation: none, model or sequential CPU offload (default: only if needed)."),
    choices=("none", "model", "sequential"),
)
VAE_TILING = Input("bool", N_("Image generation: decode the VAE in tiles (default: if needed)."))
CACHE_LATENTS = Input(
    "bool",
    N_("Image fine-tuning: latents and text embeddings computed beforehand (no encoders loaded)."),
)
GPU_NAME = Input("text", N_("The GPU you have in mind."), flag="gpu")
FRAMEWORK = Input(
    "choice",
    N_(
        "Run it as this framework's recipe does (its documented defaults): hf, trl, torchtune, "
        "axolotl, llama-factory, deepspeed, fsdp, torchtitan or megatron."
    ),
    choices=FRAMEWORKS,
)
OPTIMIZER = Input(
    "choice",
    N_(
        "adamw, adamw-fused, adamw-8bit, paged-adamw-8bit, sgd or adafactor (default: the "
        "framework's, else adamw)."
    ),
    choices=OPTIMIZERS,
)
LORA_RANK = Input(
    "int", N_("LoRA rank (default: the framework's; PEFT's is 8)."), low=1, high=65_536
)
LORA_TARGETS = Input(
    "text",
    N_(
        "LoRA targets: module names (q_proj,v_proj), all-linear, attention or peft-default "
        "(PEFT's per-architecture default)."
    ),
    max_length=400,
)
GLOBAL_BATCH = Input(
    "int",
    N_(
        "Sequences or images per optimizer step, over all GPUs (gradient accumulation makes up "
        "the rest)."
    ),
    low=1,
    high=100_000_000,
)
GRAD_ACCUM = Input(
    "int", N_("Micro-batches accumulated per optimizer step."), low=1, high=100_000_000
)
OFFLOAD = Input(
    "choice",
    N_("Keep in host memory: none, optimizer (ZeRO-Offload) or all (parameters too)."),
    choices=OFFLOADS,
)
OPTIMIZER_IN_BACKWARD = Input(
    "bool", N_("Step the optimizer in the backward pass (no gradient buffer; torchtune).")
)
ACTIVATION_OFFLOAD = Input("bool", N_("Offload saved activations to host memory."))
TP_OVERLAP = Input(
    "bool",
    N_("Overlap the tensor-parallel collectives with the GEMMs (NeMo's tp_comm_overlap)."),
)
CHUNKED_LOSS = Input("bool", N_("Cross-entropy over chunks of the output (torchtune)."))
COMPILED = Input(
    "bool",
    N_(
        "torch.compile the model and loss: fused kernels, fewer saved activations, no fp32 "
        "logits, a faster step."
    ),
    flag="compile",
)
NETWORK = Input(
    "choice",
    N_("Between nodes: infiniband (a NIC per GPU) or ethernet (100 GbE a node)."),
    choices=NETWORKS,
)
ATTENTION = Input(
    "choice",
    N_("sdpa (FlashAttention's causal half, PyTorch's default) or eager (default: sdpa)."),
    choices=ATTENTIONS,
)
MEMORY_FORMAT = Input(
    "choice",
    N_(
        "Training a convolutional network: contiguous (NCHW, PyTorch's default) or "
        "channels_last (NHWC, which tensor-core convolutions take without transposes; "
        "default: the recipe's, channels_last in 16 bits)."
    ),
    choices=MEMORY_FORMATS,
)
NETWORK_GBIT = Input(
    "size",
    N_("Between instances: their network, Gb/s an instance (default: as the offer sells it)."),
    low=0.1,
    high=100_000,
)
#: ``estimate``'s GPU count (the job's field is ``gpus``)
GPU_COUNT = Input(
    "int",
    N_(
        "How many of them: training spreads as its framework does (data, ZeRO/FSDP or "
        "tensor × pipeline parallel); inference splits the model by tensor parallelism."
    ),
    low=1,
    high=100_000,
)
GPUS_PER_INSTANCE = Input(
    "int",
    N_("GPUs in each instance, where the GPUs are several instances joined by a network."),
    low=1,
    high=64,
)
NVLINK_BRIDGE = Input(
    "bool",
    N_(
        "PCIe cards joined in pairs by NVLink bridges (default: not assumed; rented instances "
        "do not state them)."
    ),
)
TP = Input("int", N_("Tensor-parallel degree."), low=1, high=1024)
ZERO = Input(
    "int",
    N_("ZeRO stage 0-3 (3 = FSDP full shard; default: the framework's, else 0)."),
    low=0,
    high=3,
)
PP = Input("int", N_("Pipeline-parallel degree."), low=1, high=1024)
CP = Input(
    "int",
    N_("Context-parallel degree: each sequence split over this many GPUs (ring attention)."),
    low=1,
    high=64,
)
#: A degree the layout search chooses where it is left open (``estimate``)
CHOSEN_CP = replace(
    CP, help=N_("Context-parallel degree: a sequence over this many GPUs (default: chosen).")
)
VP = Input(
    "int",
    N_("Virtual pipeline stages per GPU, the interleaved schedule (default: two layers each)."),
    low=1,
    high=128,
)
RECOMPUTE_LAYERS = Input(
    "int",
    N_(
        "Recompute only the first N layers of each model chunk, Megatron's block method "
        "(recompute_num_layers), the others keeping their activations (default: every layer "
        "where recomputation is on; a preset's own where NVIDIA's recipe sets it)."
    ),
    low=1,
    high=1024,
)
MARKET_NAMES = Input(
    "names", N_("Markets to rent in: on-demand, spot, marketplace."), choices=MARKETS, flag="market"
)


#: Serving settings shared by recommend's components and estimate
SERVE_ENGINE = Input(
    "choice",
    N_("Serving engine: vllm, sglang, trtllm, tgi, llama.cpp, ollama or transformers, or "
       "a release: vllm@0.6 or vllm@0.7 (vLLM's V0 engine), sglang@0.4.3 (default: the one of "
       "vllm, sglang and trtllm "
       "that serves the most; llama.cpp or ollama for GGUF)."),
    choices=ENGINE_IDS,
)  # fmt: skip
TTFT = Input("latency", N_("Serving: time to first token to meet, e.g. 2s."), low=1e-4, high=3600)
SERVE_KV_DTYPE = Input(
    "choice",
    N_("Serving: the KV cache's dtype, auto (the model's; an FP8 checkpoint's FP8 on "
       "TensorRT-LLM), fp16, bf16 or fp8 (half the memory a token)."),
    choices=("auto", "fp16", "bf16", "fp8"),
)  # fmt: skip
SERVE_LENGTHS = Input(
    "choice",
    N_("A dataset's mean lengths in place of the prompt and generated tokens: sharegpt "
       "(227 in, 189 out) or openorca (222 in, 294 out)."),
    choices=LENGTH_IDS,
)  # fmt: skip
TPOT = Input(
    "latency", N_("Serving: time per output token to meet, e.g. 100ms."), low=1e-5, high=60
)
PERCENTILE = Input(
    "choice", N_("The latency targets' percentile: p50, p95 or p99."), choices=("p50", "p95", "p99")
)
REQUEST_RATE = Input("number", N_("Serving: requests per second to sustain."), low=1e-6, high=1e6)
HOURS = Input(
    "duration", N_("Hours of use (serving, interactive work): 200h, 30d."), low=1e-3, high=1e6
)
SERVICES = Input(
    "int", N_("Isolated copies of this service (MIG or separate GPUs)."), low=1, high=10_000
)
