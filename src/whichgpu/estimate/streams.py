"""The memory-bound kernels between the GEMMs (norms, activations, residual adds, a CNN's
batch norms and, on NCHW, cuDNN's transposes): a unit of work's activations streamed
through DRAM a fitted number of times (the passes, one term per kind of work), at the
GPU's bandwidth (:func:`stream_seconds`)."""

from __future__ import annotations

from whichgpu.catalog.records import GPU, Benchmark
from whichgpu.job import SIXTEEN_BIT, Job, build_job
from whichgpu.models.arch import ModelArch

#: The fitted number of passes over the activations each regime's memory-bound kernels make
STREAM_TERMS = {
    "cnn-train": "cnn:passes_train",
    "cnn-infer": "cnn:passes_infer",
    "llm-train": "transformer:passes_train",
    "transformer-train": "transformer:passes_train",
    "diffusion-infer": "diffusion:passes",
}

#: Bytes a transformer layer saves per token and hidden unit in 16 bits for its backward,
#: with no recomputation: Korthikanti et al., 2022, "Reducing Activation Recomputation in
#: Large Transformer Models", Eq. 1, ``s·b·h·(34 + 5·a·s/h)``, the attention scores' term
#: gone under FlashAttention, which keeps none of them.
SAVED_BYTES_PER_HIDDEN = 34


#: CNN training on tensor cores with contiguous (NCHW) activations: its passes a term of
#: their own, which counts cuDNN's transposes of each tensor-core convolution's input and
#: output to NHWC and back on top of the elementwise kernels' (NVIDIA, "Convolutional Layers
#: User's Guide": Tensor Core convolutions "require NHWC layout", and NCHW input costs
#: "automatic transpose operations"; profiles put ``nchwToNhwcKernel`` at 14 to 22 % of a
#: V100's ResNet-50 step). In 16 bits fitted on the same runs in both layouts (timm's RTX
#: 3090 tables, PyTorch's channels-last tutorial, a V100 comparison) beside the layouts the
#: harnesses ran (Lambda's NCHW, NVIDIA DeepLearningExamples' NHWC with AMP); in TF32 a
#: term of its own (``_tf32``), on the NCHW TF32 runs of Lambda and DeepLearningExamples
#: beside TensorFlow's and MXNet's: no published comparison measured TF32 in both layouts,
#: and charged the 16-bit term's passes, Lambda's TF32 runs had read 13 to 23 % slow
NCHW_TERMS = {"cnn-train": "cnn:passes_train_nchw"}
#: Precisions whose convolutions run on tensor cores: 16 bits, and TF32 (cuDNN's TF32
#: convolutions take NHWC as its 16-bit ones do)
TENSOR_CORE_CONV = SIXTEEN_BIT | {"tf32"}


def stream_term(regime: str) -> str:
    return STREAM_TERMS.get(regime, "cnn:passes_infer")


def stream_term_of(bench: Benchmark, gpu: GPU) -> str:
    """The fitted passes ``bench``'s stream runs: its regime's (:func:`stream_term`), or,
    for a CNN trained on an NVIDIA GPU's tensor cores (:data:`TENSOR_CORE_CONV`) with
    contiguous activations, NCHW's (:data:`NCHW_TERMS`: the transposes are cuDNN's; on an
    AMD GPU, MIOpen takes NHWC only where PyTorch is told to, and no published run measured
    either layout there)."""
    nchw = NCHW_TERMS.get(bench.regime)
    if (nchw and gpu.cuda and bench.memory_format == "contiguous"
            and bench.precision in TENSOR_CORE_CONV):  # fmt: skip
        return nchw if bench.precision in SIXTEEN_BIT else f"{nchw}_tf32"
    return stream_term(bench.regime)


def stream_seconds(
    bench: Benchmark, gpu: GPU, arch: ModelArch | None, job: Job | None = None
) -> float:
    """One pass over a unit's activations at the GPUs' memory bandwidth: an image's
    (:func:`activations.resnet_image_bytes`, at the job's compute dtype) for a CNN (``arch``
    and ``job``: the measurement's model and job); for a transformer's training, a token's
    through every layer (:data:`SAVED_BYTES_PER_HIDDEN`: the norms, activation functions,
    dropout and residual adds between the GEMMs read and write tensors of that size,
    memory-bound, so a small hidden size spends more of its step on them than a large one);
    0 for other work."""
    if bench.regime in ("llm-train", "transformer-train"):
        return _transformer_stream_s(bench, gpu, arch)
    if bench.regime == "diffusion-infer":
        from whichgpu.estimate.diffusion_bench import diffusion_stream_s

        return diffusion_stream_s(bench, gpu)
    if bench.regime not in ("cnn-train", "cnn-infer") or job is None:
        return 0.0
    if arch is None or arch.kind != "cnn":
        return 0.0
    from whichgpu.estimate.activations import resnet_image_bytes

    if (bench.precision or "") in ("32-true", "tf32"):
        job = build_job(task=job.task, precision="32-true", batch=job.batch)
    bandwidth = gpu.memory_bandwidth_gb_per_s * 1e9 * bench.gpus
    return resnet_image_bytes(arch, job) / bandwidth


def _transformer_stream_s(bench: Benchmark, gpu: GPU, arch: ModelArch | None) -> float:
    if arch is None or not arch.n_layers or not arch.hidden_size or arch.kind == "cnn":
        return 0.0
    width = 2 if bench.precision != "32-true" else 4  # the saved tensors' bytes, by precision
    per_token = SAVED_BYTES_PER_HIDDEN / 2 * width * arch.hidden_size * arch.n_layers
    per_unit = per_token * (bench.seq or 2048) if bench.unit == "sequences/s" else per_token
    if bench.unit not in ("tokens/s", "sequences/s"):
        return 0.0
    return per_unit / (gpu.memory_bandwidth_gb_per_s * 1e9 * bench.gpus)
