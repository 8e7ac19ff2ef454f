#!/usr/bin/env python3
"""Time Hugging Face transformers' ``generate()`` on one GPU: its time to the first token and
per output token, at several batch sizes and model depths.

Ground truth for whichgpu's ``transformers`` serving engine (``whichgpu.job.engines``), which
starts from the TensorRT-LLM-calibrated roofline; it does not use whichgpu. Each model is
built from its published config with random weights (a GEMM's time does not depend on the
values) in BF16 on the GPU, with transformers' defaults: SDPA attention, a dynamic KV
cache, eager PyTorch (no CUDA graphs). A batch of ``batch`` random prompts of ``PROMPT``
tokens runs ``generate(max_new_tokens=1)`` (the prefill and one token) and
``generate(max_new_tokens=NEW, min_new_tokens=NEW)``, greedy, after one warm-up of each;
time per output token is the difference over ``NEW - 1`` tokens. Rows go to
``validation/measured_transformers.csv`` with the GPU's name, the host's CPU and the versions.

Usage: ``python validation/measure_transformers_decode.py CONFIG_DIR OUT.csv`` on a CUDA
machine (CONFIG_DIR holds the ``config.json`` files named below; about a minute on an H200).
"""

from __future__ import annotations

import functools
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

import torch
import transformers

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measured_rows import measure_all

PROMPT, NEW = 512, 128
#: (config file, batch sizes)
CASES = [
    ("meta-llama--Llama-3.2-1B.json", (1, 16)),
    ("meta-llama--Meta-Llama-3.1-8B.json", (1, 16, 64)),
    ("Qwen--Qwen2.5-14B.json", (1, 16)),
]
FIELDS = ["model", "layers", "batch", "prompt", "new", "ttft_s", "tpot_s", "peak_gib", "gpu",
          "cpu", "torch", "transformers"]  # fmt: skip


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def run(model: torch.nn.Module, ids: torch.Tensor, new: int) -> float:
    mask = torch.ones_like(ids)
    torch.cuda.synchronize()
    start = time.perf_counter()
    model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=new, min_new_tokens=new,
                   do_sample=False, pad_token_id=0)  # fmt: skip
    torch.cuda.synchronize()
    return time.perf_counter() - start


@functools.lru_cache(maxsize=1)
def built(configs: Path, name: str) -> tuple[torch.nn.Module, Any]:
    """The model of ``name``'s config, built once for its cases (they follow one another;
    the previous model is dropped)."""
    cfg = transformers.AutoConfig.for_model(**json.loads((configs / name).read_text()))
    torch.set_default_dtype(torch.bfloat16)
    with torch.device("cuda"):
        model = transformers.AutoModelForCausalLM.from_config(cfg).eval()
    torch.set_default_dtype(torch.float32)
    return model, cfg


def measure(configs: Path, name: str, batch: int) -> dict[str, Any]:
    model, cfg = built(configs, name)
    ids = torch.randint(100, 1000, (batch, PROMPT), device="cuda")
    with torch.inference_mode():
        run(model, ids, 1), run(model, ids, NEW)  # warm-up
        torch.cuda.reset_peak_memory_stats()
        first = min(run(model, ids, 1) for _ in range(3))
        whole = run(model, ids, NEW)
    return {
        "model": name.removesuffix(".json").replace("--", "/", 1),
        "layers": cfg.num_hidden_layers,
        "batch": batch, "prompt": PROMPT, "new": NEW, "ttft_s": f"{first:.5f}",
        "tpot_s": f"{(whole - first) / (NEW - 1):.6f}",
        "peak_gib": f"{torch.cuda.max_memory_allocated() / 2**30:.3f}",
        "gpu": torch.cuda.get_device_name(), "cpu": cpu_name(),
        "torch": torch.__version__, "transformers": transformers.__version__,
    }  # fmt: skip


def main(argv: list[str]) -> int:
    configs, out = Path(argv[1]), Path(argv[2])
    cases = [(name, batch) for name, batches in CASES for batch in batches]
    return measure_all(cases, lambda case: measure(configs, *case), out, FIELDS)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
