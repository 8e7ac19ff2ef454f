#!/usr/bin/env python3
"""Time and size a diffusion denoiser's step and a VAE decode on one GPU, as diffusers runs them.

Ground truth for whichgpu's image-generation model (``whichgpu.estimate.diffusion``) on a GPU
no published run covers; it does not use whichgpu. Each module is built by diffusers 0.42 from
the config whichgpu ships (``src/whichgpu/models/pipelines/*.json``) with random weights (a
GEMM's and a convolution's time do not depend on the values), on the GPU, in the dtype asked,
with PyTorch 2's SDPA attention (diffusers' default):

* ``step``: one denoiser forward on ``2 × batch`` latents (classifier-free guidance's two
  halves; FLUX is guidance-distilled: ``batch``), the text context at the pipeline's token
  count, after 3 warm-up forwards: the median of 10 CUDA-event-timed forwards, and
  ``torch.cuda.max_memory_allocated`` over them (weights included);
* ``decode``: ``vae.decode`` of ``batch`` latents, timed and sized the same way (3 runs).

FP32 rows run under ``torch.backends.cuda.matmul`` precision ``highest`` (PyTorch's default:
matmuls on FP32 cores) and ``high`` (TF32), cuDNN's convolutions on TF32 in both (its default).
Rows go to ``validation/measured_diffusion.csv`` with the GPU's name and the software's
versions.

Usage: ``python validation/measure_diffusion.py OUT.csv`` on a machine with a CUDA GPU and
diffusers installed (a few minutes on an H200).
"""

from __future__ import annotations

import functools
import json
import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measured_rows import measure_all

PIPELINES = Path(__file__).resolve().parents[1] / "src" / "whichgpu" / "models" / "pipelines"
DTYPES = {"16-true": torch.float16, "bf16-true": torch.bfloat16, "32-true": torch.float32}
#: (pipeline, what, px, batch, precision, matmul precision)
CASES = [
    ("sd-1.5", "step", 512, 1, "16-true", "highest"),
    ("sd-1.5", "step", 512, 4, "16-true", "highest"),
    ("sd-1.5", "step", 512, 16, "16-true", "highest"),
    ("sd-1.5", "step", 512, 1, "32-true", "highest"),
    ("sd-1.5", "step", 512, 1, "32-true", "high"),
    ("sd-1.5", "decode", 512, 1, "16-true", "highest"),
    ("sdxl", "step", 1024, 1, "16-true", "highest"),
    ("sdxl", "step", 1024, 4, "16-true", "highest"),
    ("sdxl", "step", 1024, 1, "bf16-true", "highest"),
    ("sdxl", "step", 1024, 1, "32-true", "highest"),
    ("sdxl", "step", 1024, 1, "32-true", "high"),
    ("sdxl", "decode", 1024, 1, "32-true", "highest"),
    ("sdxl", "decode", 1024, 4, "32-true", "highest"),
    ("flux.1-dev", "step", 1024, 1, "bf16-true", "highest"),
    ("flux.1-dev", "step", 1024, 4, "bf16-true", "highest"),
    ("flux.1-dev", "decode", 1024, 1, "bf16-true", "highest"),
]
FIELDS = ["pipeline", "what", "px", "batch", "precision", "matmul", "seconds", "peak_gib",
          "weights_gib", "gpu", "torch", "diffusers"]  # fmt: skip


def config(pipeline: str, role: str) -> dict:
    data = json.loads((PIPELINES / f"{pipeline}.json").read_text(encoding="utf-8"))
    return dict(data["components"][role])


def build(cfg: dict, dtype: torch.dtype) -> torch.nn.Module:
    import diffusers

    cls = getattr(diffusers, cfg["_class_name"])
    settings = {k: v for k, v in cfg.items() if not k.startswith("_")}
    torch.set_default_dtype(dtype)  # initialise in the dtype asked, on the GPU
    try:
        with torch.device("cuda"):
            module = cls.from_config(settings)
    finally:
        torch.set_default_dtype(torch.float32)
    return module.to(device="cuda", dtype=dtype).eval()


def timed(fn, reps: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def denoiser_inputs(pipeline: str, cfg: dict, px: int, batch: int, dtype: torch.dtype) -> dict:
    latent = px // 8
    kind = cfg["_class_name"]
    if kind == "FluxTransformer2DModel":
        tokens = (latent // 2) ** 2
        n = batch  # guidance-distilled: one pass a step
        return {
            "hidden_states": torch.randn(n, tokens, cfg["in_channels"], dtype=dtype),
            "encoder_hidden_states": torch.randn(n, 512, cfg["joint_attention_dim"], dtype=dtype),
            "pooled_projections": torch.randn(n, cfg["pooled_projection_dim"], dtype=dtype),
            "timestep": torch.full((n,), 0.5, dtype=dtype),
            "img_ids": torch.zeros(tokens, 3, dtype=dtype),
            "txt_ids": torch.zeros(512, 3, dtype=dtype),
            "guidance": torch.full((n,), 3.5, dtype=dtype),
            "return_dict": False,
        }
    n = 2 * batch  # classifier-free guidance: the prompt and the negative prompt
    inputs = {
        "sample": torch.randn(n, cfg.get("in_channels", 4), latent, latent, dtype=dtype),
        "timestep": torch.tensor(500.0),
        "encoder_hidden_states": torch.randn(n, 77, cfg["cross_attention_dim"], dtype=dtype),
        "return_dict": False,
    }
    if cfg.get("addition_embed_type") == "text_time":
        inputs["added_cond_kwargs"] = {
            "text_embeds": torch.randn(n, 1280, dtype=dtype),
            "time_ids": torch.randn(n, 6, dtype=dtype),
        }
    return inputs


def measure(case: tuple) -> dict:  # type: ignore[type-arg]
    import diffusers

    pipeline, what, px, batch, precision, matmul = case
    torch.backends.cuda.matmul.allow_tf32 = matmul == "high"
    torch.backends.cudnn.allow_tf32 = True
    dtype = DTYPES[precision]
    torch.cuda.empty_cache()
    role = "denoiser" if what == "step" else "vae"
    cfg = config(pipeline, role)
    module = build(cfg, dtype)
    weights = torch.cuda.memory_allocated()
    with torch.device("cuda"), torch.inference_mode():
        if what == "step":
            run = functools.partial(module, **denoiser_inputs(pipeline, cfg, px, batch, dtype))
        else:
            z = torch.randn(batch, cfg.get("latent_channels", 4), px // 8, px // 8, dtype=dtype)
            run = functools.partial(module.decode, z, return_dict=False)

        reps = 10 if what == "step" else 3
        for _ in range(3):
            run()
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        seconds = timed(run, reps)
        peak = torch.cuda.max_memory_allocated()
    del module, run
    return {
        "pipeline": pipeline, "what": what, "px": px, "batch": batch, "precision": precision,
        "matmul": matmul, "seconds": f"{seconds:.5f}", "peak_gib": f"{peak / 2**30:.3f}",
        "weights_gib": f"{weights / 2**30:.3f}", "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__, "diffusers": diffusers.__version__,
    }  # fmt: skip


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else Path("measured_diffusion.csv")
    return measure_all(CASES, measure, out, FIELDS)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
