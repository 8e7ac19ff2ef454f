#!/usr/bin/env python3
"""Time and size Hugging Face Trainer steps (with PEFT LoRA, or a full fine-tune) on one GPU.

Ground truth for whichgpu's training estimates under ``--framework hf`` on a GPU the
calibration's fine-tuning runs do not cover; it does not use whichgpu. Each model is built
from its published config with random weights (a step's time does not depend on the values)
in BF16 on the GPU, as ``from_pretrained(torch_dtype=torch.bfloat16)`` loads it; LoRA is
PEFT's ``LoraConfig`` at its defaults but the rank (its default targets for Llama: q_proj and
v_proj; the adapters in FP32, PEFT's ``autocast_adapter_dtype``). The Trainer runs with
``bf16=True`` and its other defaults (AdamW, no gradient checkpointing, no accumulation) on
random token sequences of ``seq`` tokens; a step's time is the median of the steps after the
first three (a callback's clock), its memory ``torch.cuda.max_memory_allocated``. Rows go
to ``validation/measured_trainer.csv``.

Usage: ``python validation/measure_trainer.py CONFIG_DIR OUT.csv`` on a CUDA machine with
transformers and peft (CONFIG_DIR holds the config files named below; ~2 min on an H200).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

import peft
import torch
import transformers

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measured_rows import measure_all

#: (config file, method, micro-batch, sequence tokens, LoRA rank)
CASES = [
    ("meta-llama--Meta-Llama-3.1-8B.json", "lora", 8, 512, 16),
    ("meta-llama--Meta-Llama-3.1-8B.json", "lora", 4, 1024, 16),
    ("meta-llama--Llama-3.2-1B.json", "full", 8, 512, 0),
]
STEPS = 10
FIELDS = ["model", "method", "batch", "seq", "lora_rank", "step_s", "tokens_per_s", "peak_gib",
          "gpu", "torch", "transformers", "peft"]  # fmt: skip


class Clock(transformers.TrainerCallback):
    """Each optimizer step's end, by the wall clock after the GPU has finished it."""

    def __init__(self) -> None:
        self.ends: list[float] = []

    def on_step_end(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
        torch.cuda.synchronize()
        self.ends.append(time.perf_counter())


class Tokens(torch.utils.data.Dataset):  # type: ignore[type-arg]
    def __init__(self, n: int, seq: int, vocab: int) -> None:
        self.ids = torch.randint(100, vocab - 1, (n, seq))

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


def measure(configs: Path, name: str, method: str, batch: int, seq: int, rank: int) -> dict:  # type: ignore[type-arg]
    cfg = transformers.AutoConfig.for_model(**json.loads((configs / name).read_text()))
    torch.set_default_dtype(torch.bfloat16)
    with torch.device("cuda"):
        model = transformers.AutoModelForCausalLM.from_config(cfg)
    torch.set_default_dtype(torch.float32)
    if method == "lora":
        model = peft.get_peft_model(model, peft.LoraConfig(r=rank, task_type="CAUSAL_LM"))
    clock = Clock()
    args = transformers.TrainingArguments(
        output_dir="/tmp/trainer", per_device_train_batch_size=batch, max_steps=STEPS, bf16=True,
        report_to=[], save_strategy="no", logging_strategy="no", dataloader_num_workers=0,
        disable_tqdm=True,
    )  # fmt: skip
    trainer = transformers.Trainer(
        model=model, args=args, train_dataset=Tokens(batch * STEPS, seq, cfg.vocab_size),
        callbacks=[clock],
    )  # fmt: skip
    torch.cuda.reset_peak_memory_stats()
    trainer.train()
    steps = [b - a for a, b in zip(clock.ends[2:], clock.ends[3:], strict=False)]
    step = statistics.median(steps)
    row = {
        "model": name.removesuffix(".json").replace("--", "/", 1), "method": method,
        "batch": batch, "seq": seq, "lora_rank": rank or "", "step_s": f"{step:.4f}",
        "tokens_per_s": f"{batch * seq / step:.0f}",
        "peak_gib": f"{torch.cuda.max_memory_allocated() / 2**30:.3f}",
        "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
        "transformers": transformers.__version__, "peft": peft.__version__,
    }  # fmt: skip
    del trainer, model
    torch.cuda.empty_cache()
    return row


def main(argv: list[str]) -> int:
    configs, out = Path(argv[1]), Path(argv[2])
    return measure_all(CASES, lambda case: measure(configs, *case), out, FIELDS)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
