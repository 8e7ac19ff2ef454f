#!/usr/bin/env python3
"""Measure peak accelerator memory of real PyTorch / transformers / peft steps.

This harness produces the ground-truth data that whichgpu's estimator is
validated against (``validation/memory_measurements.csv`` and
``validation/param_counts.csv``).  It does not use whichgpu at all: every
number comes from PyTorch's own accounting of the tensors that a real
transformers (+ peft) step creates.

Usage::

    python validation/measure_memory.py                 # all cases + param counts
    python validation/measure_memory.py --list          # print the case names
    python validation/measure_memory.py --only 'llama-2-7b__train__*' --jobs 2
    python validation/measure_memory.py --out /tmp/m.csv \
        --only gpt2__inference__bf16-true__b1_s512__sdpa

With ``--only`` the selected rows are merged into an existing ``--out`` file
(rows of other cases are kept); without it the file is rewritten.

Method
------
1. The model is built from a Hugging Face ``config.json`` copy
   (``/work/shared/reference/model_configs``; ``_``-prefixed metadata keys
   dropped, a few documented keys completed, see ``CONFIG_COMPLETIONS``) with
   ``AutoModelForCausalLM.from_config`` on the ``meta`` device, so nothing is
   allocated.  LoRA adapters are added with ``peft.get_peft_model`` and
   gradient checkpointing with ``model.gradient_checkpointing_enable()``
   (transformers' default, non-reentrant ``torch.utils.checkpoint``).
2. Inside ``torch._subclasses.fake_tensor.FakeTensorMode`` every parameter and
   buffer is replaced by a *fake* CPU tensor of the same shape, dtype and
   ``requires_grad`` (tied weights stay tied).  Fake tensors carry metadata
   only: the real transformers/peft/torch.optim code runs op by op, every op
   produces correctly shaped outputs, autograd saves exactly what it saves
   for real tensors, but no data is allocated, so 13B shapes run in seconds.
3. Two real iterations are run; the second one is measured (for training the
   AdamW state then exists, as in any step after the first).  The measured
   iteration runs inside ``torch.distributed._tools.mem_tracker.MemTracker``,
   a ``TorchDispatchMode`` that sees every op output, follows every untyped
   storage through weak references until it is freed and keeps a running
   per-category total (Parameter, Buffer, Gradient, Activation, Temp,
   Optstate, Other) and the snapshot at the peak of the total.
   Workarounds: (a) every storage is rounded up to a multiple of 512 bytes,
   the rounding of the CUDA caching allocator (``MemTracker`` applies
   ``_PYTORCH_MIN_ALLOCATE`` only to ``cuda`` devices; we patch
   ``_WeakRefInfo._calculate_mem_consumed`` so it applies to the fake CPU
   tensors too); (b) grad hooks are installed only on parameters that require
   grad (``MemTracker`` hooks every parameter, which raises for frozen LoRA
   base weights); (c) ``reset_mod_stats()`` before every root forward call
   (``MemTracker`` refuses repeated root calls, e.g. in the decode loop);
   (d) a fresh tracker is used for the measured iteration, seeded with
   ``track_external(model, optimizer, inputs)``, so the peak is the peak of
   that iteration only; (e) only the global peak is kept (MemTracker's
   per-module peak bookkeeping loops over all modules on every op);
   (f) tensors allocated inside ``optimizer.step()`` are labelled Temp
   (MemTracker labels them Optstate); the persistent AdamW state keeps the
   Optstate label, so ``optimizer_bytes`` is the state and ``temps_bytes``
   at a step peak is foreach AdamW's temporaries.
   In fake mode only, transformers' packed-sequence detection (which reads
   ``position_ids`` values and, seeing fake tensors, assumes packing and
   builds a 4D mask) is given the answer the real run computes for our
   unpacked inputs (``unpacked_sequences``).
4. The same code path runs with real tensors (``method=real``) for small
   models on the CPU; fake and real totals must agree within 0.25 % (the
   driver prints the comparison and exits non-zero otherwise; all pairs
   agree to the byte with torch 2.13 / transformers 5.24 / peft 0.21).

What exactly is run (see ``run_phase``):

* ``prefill``: ``model.eval()``, ``torch.no_grad()``, one forward with
  ``use_cache=True`` and transformers' default ``logits_to_keep=0`` (logits
  for every position, in the weight dtype); the output (logits + KV cache)
  is alive at the end of the forward.
* ``generate``: a manual greedy decode loop that mirrors
  ``GenerationMixin.generate``: prefill with ``logits_to_keep=1`` (as
  ``generate`` does), then ``generate - 1`` single-token forwards with the
  ``DynamicCache``; the last-position logits are copied to fp32 and
  ``argmax``-ed; the previous output is released before the next forward.
  No attention mask is passed (no padding), no data-dependent control flow.
* ``train_step``: ``model.train()``, forward with ``labels=input_ids``,
  ``use_cache=False`` (transformers' ``ForCausalLMLoss``: logits upcast to
  fp32, shifted cross entropy), the model output is released before
  ``loss.backward()`` (as the HF Trainer and Lightning do), then
  ``optimizer.step()`` and ``optimizer.zero_grad(set_to_none=True)``.
  ``bf16-mixed`` wraps forward+loss in ``torch.autocast("cpu",
  dtype=torch.bfloat16)`` with fp32 weights (Lightning's
  ``precision="bf16-mixed"``); ``bf16-true`` has bf16 weights, grads and
  optimizer state; LoRA has a bf16 frozen base and peft's default fp32
  adapters (``autocast_adapter_dtype=True``).  The optimizer is
  ``torch.optim.AdamW(lr=1e-4, foreach=True)``: ``foreach=True`` is what the
  default (``foreach=None``) resolves to for CUDA parameters; on the CPU the
  default would resolve to the per-tensor loop, which has no big temporaries.

CUDA emulations / differences (details in validation/README.md):

* The numbers correspond to ``torch.cuda.max_memory_allocated()`` (tensor
  memory, 512-byte rounding), not to reserved memory or ``nvidia-smi``: no
  CUDA context, no caching-allocator fragmentation, no cuBLAS/cuDNN
  workspaces, no kernel-internal scratch buffers.
* CPU autocast has a different fp32 op list than CUDA autocast (e.g. CUDA
  runs ``softmax``, ``layer_norm`` and ``pow`` — GPT-2's GELU — in fp32, CPU
  autocast keeps them in bf16).
* SDPA runs the CPU flash kernel (``_scaled_dot_product_flash_attention_for_cpu``),
  which saves output + logsumexp like the CUDA flash/memory-efficient
  kernels.  The CPU flash kernel does not support dropout; GPT-2 (the only
  model here with ``attn_pdrop > 0``) is therefore run with ``attn_pdrop=0``
  under SDPA, which is what CUDA's flash kernels cost (they keep no dropout
  mask).  Other dropouts use ``torch.native_dropout`` (1-byte bool mask) as
  on CUDA, instead of the CPU fallback that keeps a mask in the input dtype.
* AdamW's ``step`` counters are 0-dim host tensors on CUDA; here they are CPU
  tensors and counted (512 bytes each, < 0.2 MB per model).
* ``memory_ablations.csv`` holds diagnostic variants (prefill with
  ``logits_to_keep=1``; GPT-2 with its attention dropout kept under SDPA).

torch modules used: ``torch._subclasses.fake_tensor.FakeTensorMode``,
``torch.distributed._tools.mem_tracker.MemTracker`` (and its ``ModTracker``),
``torch.utils.checkpoint`` (via transformers), ``torch.autocast``,
``torch.optim.AdamW``; transformers ``AutoConfig.for_model`` /
``AutoModelForCausalLM.from_config`` / ``DynamicCache``; peft ``LoraConfig`` /
``get_peft_model``.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import dataclasses
import fnmatch
import gc
import json
import math
import os
import sys
import time
import traceback
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "memory_measurements.csv"
DEFAULT_PARAMS_OUT = HERE / "param_counts.csv"
DEFAULT_ABLATION_OUT = HERE / "memory_ablations.csv"
CONFIG_DIR = Path(os.environ.get("WHICHGPU_MODEL_CONFIGS", "/work/shared/reference/model_configs"))

COLUMNS = [
    "case",
    "model",
    "config_file",
    "task",
    "phase",
    "precision",
    "optimizer",
    "batch",
    "seq",
    "generate",
    "checkpointing",
    "attention",
    "lora_rank",
    "lora_targets",
    "peak_bytes",
    "params_bytes",
    "buffers_bytes",
    "grads_bytes",
    "optimizer_bytes",
    "activations_bytes",
    "temps_bytes",
    "other_bytes",
    "method",
    "torch_version",
    "transformers_version",
    "peft_version",
    "measured_on",
]
ABLATION_COLUMNS = [*COLUMNS, "variant", "note"]
PARAM_COLUMNS = ["model", "config_file", "total_params", "trainable_lora_params_r16_qkvo"]

# MemTracker category (``_MemRefType.value``) -> CSV column.
CATEGORY_COLUMNS = {
    "Parameter": "params_bytes",
    "Buffer": "buffers_bytes",
    "Gradient": "grads_bytes",
    "Optstate": "optimizer_bytes",
    "Activation": "activations_bytes",
    "Temp": "temps_bytes",
    "Other": "other_bytes",
}

ALLOC_ROUND = 512  # CUDA caching allocator: every block is a multiple of 512 bytes.

# --------------------------------------------------------------------------------------
# Models and configs
# --------------------------------------------------------------------------------------

# Keys missing from partial reference configs, completed from the published HF config.json.
# Only keys that change shapes or the executed code are listed.
CONFIG_COMPLETIONS: dict[str, dict] = {
    # Qwen2.5 0.5B/1.5B tie the LM head to the embedding (HF config.json:
    # "tie_word_embeddings": true);
    # the reference copy only has litgpt shape fields.  The other keys are the HF values and do not
    # change shapes (use_sliding_window false => full attention in every layer).
    "Qwen--Qwen2.5-0.5B.json": {
        "tie_word_embeddings": True,
        "hidden_act": "silu",
        "attention_dropout": 0.0,
        "use_sliding_window": False,
        "sliding_window": 32768,
        "max_window_layers": 24,
        "bos_token_id": 151643,
        "eos_token_id": 151643,
        "initializer_range": 0.02,
        "use_cache": True,
    },
    "Qwen--Qwen2.5-1.5B.json": {
        "tie_word_embeddings": True,
        "hidden_act": "silu",
        "attention_dropout": 0.0,
        "use_sliding_window": False,
        "max_window_layers": 28,
    },
    # HF DeepSeek-V2-Lite has "q_lora_rank": null (no low-rank query); transformers' default
    # is 1536.
    "deepseek-ai--DeepSeek-V2-Lite.json": {"q_lora_rank": None},
}

# model id -> reference config file (the measured models)
MODELS: dict[str, str] = {
    "gpt2": "openai-community--gpt2.json",
    "qwen2.5-0.5b": "Qwen--Qwen2.5-0.5B.json",
    "llama-3.2-1b": "meta-llama--Llama-3.2-1B.json",
    "llama-2-7b": "meta-llama--Llama-2-7b-hf.json",
    "mistral-7b-v0.3": "mistralai--Mistral-7B-v0.3.json",
    "llama-3.1-8b": "meta-llama--Meta-Llama-3.1-8B.json",
    "llama-2-13b": "meta-llama--Llama-2-13b-hf.json",
}

# "q,k,v,o"-equivalent LoRA targets per model_type (peft suffix match on module names).
QKVO_TARGETS: dict[str, list[str]] = {
    "gpt2": ["c_attn", "attn.c_proj"],  # fused qkv projection + attention output projection
    "gptj": ["q_proj", "k_proj", "v_proj", "out_proj"],
    "bert": ["query", "key", "value", "attention.output.dense"],
    "deepseek_v2": ["q_proj", "q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj"],
    "deepseek_v3": ["q_proj", "q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj"],
}
DEFAULT_QKVO = ["q_proj", "k_proj", "v_proj", "o_proj"]


def model_id_for_file(config_file: str) -> str:
    for mid, f in MODELS.items():
        if f == config_file:
            return mid
    name = config_file.removesuffix(".json").split("--", 1)[-1].lower()
    name = name.removeprefix("meta-")
    name = name.removesuffix("-hf")
    return name


def load_config_dict(config_file: str) -> dict:
    raw = json.loads((CONFIG_DIR / config_file).read_text())
    d = {k: v for k, v in raw.items() if not k.startswith("_")}
    d.update(CONFIG_COMPLETIONS.get(config_file, {}))
    return d


def build_config(config_file: str, overrides: dict | None = None):
    from transformers import AutoConfig

    d = load_config_dict(config_file)
    if overrides:
        d.update(overrides)
    if "model_type" not in d:
        raise ValueError("config has no model_type")
    model_type = d.pop("model_type")
    return AutoConfig.for_model(model_type, **d)


def qkvo_targets(model_type: str) -> list[str]:
    return QKVO_TARGETS.get(model_type, DEFAULT_QKVO)


# --------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Case:
    model: str
    task: str  # inference | train | lora
    phase: str  # prefill | generate | train_step
    precision: str  # bf16-true | 32-true | bf16-mixed
    batch: int
    seq: int
    generate: int = 0
    checkpointing: bool = False
    attention: str = "sdpa"
    lora_rank: int = 0
    lora_targets: str = ""  # "qkvo" | "all-linear" | "peft-default" | ""
    method: str = "fake"  # fake | real
    # ablation-only knobs (not in the main CSV)
    variant: str = ""
    logits_to_keep: int | None = None
    config_overrides: tuple = ()

    @property
    def config_file(self) -> str:
        return MODELS[self.model]

    @property
    def optimizer(self) -> str:
        return "adamw" if self.phase == "train_step" else "none"

    @property
    def name(self) -> str:
        parts = [self.model, self.task, self.precision]
        shape = f"b{self.batch}_s{self.seq}"
        if self.generate:
            shape += f"_g{self.generate}"
        parts.append(shape)
        parts.append(self.attention)
        if self.phase == "train_step":
            parts.append(f"ckpt{int(self.checkpointing)}")
        if self.lora_rank:
            parts.append(f"r{self.lora_rank}-{self.lora_targets}")
        if self.method != "fake":
            parts.append(self.method)
        if self.variant:
            parts.append(self.variant)
        return "__".join(parts)


def _train_grid(
    model, precisions, batches=(1, 4), seqs=(512, 1024), ckpts=(False, True), attention="sdpa"
):
    out = []
    for prec in precisions:
        for b in batches:
            for s in seqs:
                for c in ckpts:
                    out.append(
                        Case(
                            model,
                            "train",
                            "train_step",
                            prec,
                            b,
                            s,
                            checkpointing=c,
                            attention=attention,
                        )
                    )
    return out


def build_cases() -> list[Case]:
    cases: list[Case] = []
    full = ["gpt2", "qwen2.5-0.5b", "llama-3.2-1b", "llama-2-7b", "mistral-7b-v0.3", "llama-2-13b"]
    for m in [*full, "llama-3.1-8b"]:
        seqs = (512, 1024) if m == "gpt2" else (512, 2048)  # GPT-2 has 1024 positions
        # 1. inference prefill, bf16 weights
        for b in (1, 4):
            for s in seqs:
                cases.append(Case(m, "inference", "prefill", "bf16-true", b, s))
        # 2. generation with KV cache
        for b in (1, 8):
            cases.append(Case(m, "inference", "generate", "bf16-true", b, 512, generate=128))
        if m == "llama-3.1-8b":
            # smaller grid for the second 8B-class model (128k vocabulary => large logits)
            cases += _train_grid(
                m, ["32-true", "bf16-mixed", "bf16-true"], batches=(1, 4), seqs=(1024,)
            )
            for b in (1, 4):
                for c in (False, True):
                    cases.append(
                        Case(
                            m,
                            "lora",
                            "train_step",
                            "bf16-true",
                            b,
                            1024,
                            checkpointing=c,
                            lora_rank=16,
                            lora_targets="qkvo",
                        )
                    )
            continue
        # 3.-5. full training
        cases += _train_grid(m, ["32-true", "bf16-mixed", "bf16-true"])
        # 6. LoRA
        for b in (1, 4):
            for s in (512, 1024):
                for c in (False, True):
                    cases.append(
                        Case(
                            m,
                            "lora",
                            "train_step",
                            "bf16-true",
                            b,
                            s,
                            checkpointing=c,
                            lora_rank=16,
                            lora_targets="qkvo",
                        )
                    )
        for b in (1, 4):
            for c in (False, True):
                cases.append(
                    Case(
                        m,
                        "lora",
                        "train_step",
                        "bf16-true",
                        b,
                        512,
                        checkpointing=c,
                        lora_rank=8,
                        lora_targets="all-linear",
                    )
                )
    # 7. LoRA with PEFT's defaults: LoraConfig(target_modules=None) (q_proj, v_proj for
    #    these families), bf16 base and fp32 adapters under bf16 autocast
    for m, shapes in (
        ("llama-3.2-1b", ((1, 1024), (4, 1024))),
        ("qwen2.5-0.5b", ((4, 1024),)),
        ("llama-2-7b", ((1, 1024), (4, 1024))),
    ):
        for b, s in shapes:
            for c in (False, True):
                cases.append(
                    Case(
                        m,
                        "lora",
                        "train_step",
                        "bf16-mixed",
                        b,
                        s,
                        checkpointing=c,
                        lora_rank=8,
                        lora_targets="peft-default",
                    )
                )
    # eager attention for a few
    for m in ("gpt2", "llama-3.2-1b", "llama-2-7b"):
        s_long = 1024 if m == "gpt2" else 2048
        cases.append(Case(m, "inference", "prefill", "bf16-true", 1, s_long, attention="eager"))
        for s in (512, 1024):
            cases.append(Case(m, "train", "train_step", "32-true", 1, s, attention="eager"))
        cases.append(Case(m, "train", "train_step", "bf16-mixed", 1, 1024, attention="eager"))
        cases.append(
            Case(
                m, "train", "train_step", "32-true", 1, 1024, checkpointing=True, attention="eager"
            )
        )
    return cases


def build_real_cases() -> list[Case]:
    """Small cases run with real tensors as well (fake vs real cross-check)."""
    base = [
        Case("gpt2", "inference", "prefill", "bf16-true", 1, 512),
        Case("gpt2", "inference", "generate", "bf16-true", 1, 512, generate=128),
        Case("gpt2", "train", "train_step", "32-true", 1, 512),
        Case("gpt2", "train", "train_step", "32-true", 1, 512, checkpointing=True),
        Case("gpt2", "train", "train_step", "32-true", 1, 512, attention="eager"),
        Case("gpt2", "train", "train_step", "bf16-mixed", 1, 512),
        Case("gpt2", "train", "train_step", "bf16-true", 1, 512),
        Case("gpt2", "lora", "train_step", "bf16-true", 1, 512, lora_rank=16, lora_targets="qkvo"),
        Case(
            "gpt2",
            "lora",
            "train_step",
            "bf16-true",
            1,
            512,
            checkpointing=True,
            lora_rank=16,
            lora_targets="qkvo",
        ),
        Case("gpt2", "inference", "generate", "bf16-true", 8, 512, generate=128),
        Case("gpt2", "train", "train_step", "bf16-mixed", 2, 1024, checkpointing=True),
        Case("gpt2", "train", "train_step", "32-true", 2, 1024),
        Case("qwen2.5-0.5b", "inference", "prefill", "bf16-true", 1, 512),
        Case("qwen2.5-0.5b", "inference", "prefill", "bf16-true", 4, 2048),
        Case(
            "qwen2.5-0.5b",
            "lora",
            "train_step",
            "bf16-true",
            1,
            512,
            checkpointing=True,
            lora_rank=16,
            lora_targets="qkvo",
        ),
        Case("qwen2.5-0.5b", "inference", "generate", "bf16-true", 1, 512, generate=128),
        Case("qwen2.5-0.5b", "train", "train_step", "32-true", 1, 512),
        Case("qwen2.5-0.5b", "train", "train_step", "bf16-mixed", 1, 512),
        Case("qwen2.5-0.5b", "train", "train_step", "bf16-true", 1, 512, checkpointing=True),
        Case(
            "qwen2.5-0.5b",
            "lora",
            "train_step",
            "bf16-true",
            1,
            512,
            lora_rank=8,
            lora_targets="all-linear",
        ),
    ]
    out = []
    for c in base:
        out.append(c)  # the fake twin (also part of the main grid or added here)
        out.append(dataclasses.replace(c, method="real"))
    return out


def build_ablation_cases() -> list[Case]:
    """Diagnostic variants written to memory_ablations.csv (not part of the main grid)."""
    out = []
    for m in ("llama-2-7b", "llama-3.1-8b", "qwen2.5-0.5b"):
        for b, s in ((1, 2048), (4, 2048)):
            out.append(
                Case(
                    m,
                    "inference",
                    "prefill",
                    "bf16-true",
                    b,
                    s,
                    variant="logits1",
                    logits_to_keep=1,
                )
            )
    # GPT-2 with its configured attention dropout under SDPA: CPU falls back to the math kernel.
    out.append(
        Case(
            "gpt2",
            "train",
            "train_step",
            "32-true",
            1,
            1024,
            variant="attn-dropout-cpu-math",
            config_overrides=(("keep_attn_dropout", True),),
        )
    )
    return out


def all_cases() -> list[Case]:
    seen = {}
    for c in build_cases() + build_real_cases():
        seen.setdefault(c.name, c)
    return list(seen.values())


# --------------------------------------------------------------------------------------
# MemTracker adjustments
# --------------------------------------------------------------------------------------


def install_allocator_rounding() -> None:
    """Round every tracked storage up to 512 B, as the CUDA caching allocator does."""
    from torch.distributed._tools import mem_tracker as mtmod

    def _calculate_mem_consumed(self) -> int:
        mem = self.size * self.element_size
        return math.ceil(mem / ALLOC_ROUND) * ALLOC_ROUND

    mtmod._WeakRefInfo._calculate_mem_consumed = _calculate_mem_consumed


def make_tracker():
    from torch.distributed._tools.mem_tracker import _TOTAL_KEY, MemTracker, _MemRefType

    class Tracker(MemTracker):
        """MemTracker with grad hooks on trainable parameters only, optimizer-step temporaries
        labelled Temp, and global-peak-only bookkeeping."""

        def _track_module_params_and_buffers(self, module, install_grad_hooks=True):
            pm, bm = super()._track_module_params_and_buffers(module, install_grad_hooks=False)
            if install_grad_hooks:
                for p in module.parameters():
                    if (
                        not p.requires_grad
                        or self._param_to_grad_hook_handles.get(p, None) is not None
                    ):
                        continue

                    def _grad_hook(grad):
                        self._update_and_maybe_create_winfos(grad, _MemRefType.GRAD)

                    def _post_acc_hook(q):
                        self._update_and_maybe_create_winfos(q.grad, _MemRefType.GRAD)

                    h1 = p.register_hook(_grad_hook)
                    h2 = p.register_post_accumulate_grad_hook(_post_acc_hook)
                    self._param_to_grad_hook_handles[p] = (h1, h2)
            return pm, bm

        def _track(self, reftype, t):
            # MemTracker labels every tensor allocated inside optimizer.step() as Optstate.  Label
            # them Temp instead (foreach AdamW's temporaries); the persistent state is (re)labelled
            # Optstate by MemTracker's own post-step hook and by track_external(optimizer).
            if self._in_opt and reftype == _MemRefType.OPT:
                reftype = _MemRefType.TEMP
            super()._track(reftype, t)

        def _update_peak_stats(self, peak_state):
            # Only the global peak is needed; MemTracker's per-module peak bookkeeping loops over
            # every module on every op, which dominates the run time of long decode loops.
            for dev, dev_snap in self._curr_mem_snap.items():
                if self._peak_mem.get(dev, 0) < dev_snap[_TOTAL_KEY]:
                    self._peak_mem[dev] = dev_snap[_TOTAL_KEY]
                    self._peak_mem_snap[dev] = dict(dev_snap)

    return Tracker()


@contextlib.contextmanager
def unpacked_sequences(enabled: bool):
    """Give transformers' packed-sequence detection the answer the real run computes.

    Without an attention mask and cache (training), ``masking_utils.find_packed_sequence_indices``
    reads the values of ``position_ids`` to detect several sequences packed in one row.  Fake
    tensors have no values, so transformers treats them like a traced graph and assumes packing:
    it then materializes a 4D mask and SDPA loses ``is_causal``.  Our inputs are single unpacked
    sequences, for which the real function returns ``None``; return that directly (fake mode only).
    """
    if not enabled:
        yield
        return
    import transformers.masking_utils as mu

    orig = mu.find_packed_sequence_indices
    mu.find_packed_sequence_indices = lambda position_ids: None
    try:
        yield
    finally:
        mu.find_packed_sequence_indices = orig


@contextlib.contextmanager
def cuda_like_dropout():
    """F.dropout as on CUDA: the fused native_dropout kernel (bool mask) instead of the CPU
    fallback (input * noise, noise kept in the input dtype)."""
    import torch
    import torch.nn.functional as F

    orig = F.dropout

    def dropout(input, p=0.5, training=True, inplace=False):
        if training and 0.0 < p < 1.0 and input.numel() > 0 and not inplace:
            return torch.native_dropout(input, p, True)[0]
        return orig(input, p, training, inplace)

    F.dropout = dropout
    try:
        yield
    finally:
        F.dropout = orig


# --------------------------------------------------------------------------------------
# Model construction
# --------------------------------------------------------------------------------------


def weight_dtype(case: Case):
    import torch

    if case.task == "lora" or case.precision == "bf16-true":
        return torch.bfloat16
    return torch.float32


def case_config(case: Case):
    overrides = dict(case.config_overrides)
    keep_attn_dropout = overrides.pop("keep_attn_dropout", False)
    cfg_dict = load_config_dict(case.config_file)
    if cfg_dict.get("model_type") == "gpt2" and case.attention == "sdpa" and not keep_attn_dropout:
        overrides["attn_pdrop"] = (
            0.0  # see module docstring: CUDA flash/mem-efficient keep no dropout mask
        )
    return build_config(case.config_file, overrides)


def lora_target_modules(case: Case, model_type: str):
    if case.lora_targets == "all-linear":
        return "all-linear"
    if case.lora_targets == "peft-default":
        return None  # LoraConfig's default: peft's per-architecture table
    return qkvo_targets(model_type)


def lora_targets_column(case: Case, model_type: str, model=None) -> str:
    """The targets as peft resolved them ("+"-joined module names, or all-linear)."""
    if not case.lora_rank:
        return ""
    if case.lora_targets == "all-linear":
        return "all-linear"
    if case.lora_targets == "peft-default" and model is not None:
        return "+".join(sorted(model.peft_config["default"].target_modules))
    return "+".join(qkvo_targets(model_type))


def fakeify(model, fake_mode):
    """Replace every parameter/buffer (meta) by a fake CPU tensor of the same shape/dtype."""
    import torch

    memo = {}
    with fake_mode:
        for mod in model.modules():
            for name, p in list(mod._parameters.items()):
                if p is None:
                    continue
                if id(p) not in memo:
                    t = torch.empty(p.shape, dtype=p.dtype, device="cpu")
                    memo[id(p)] = torch.nn.Parameter(t, requires_grad=p.requires_grad)
                mod._parameters[name] = memo[id(p)]
            for name, b in list(mod._buffers.items()):
                if b is None:
                    continue
                if id(b) not in memo:
                    memo[id(b)] = torch.empty(b.shape, dtype=b.dtype, device="cpu")
                mod._buffers[name] = memo[id(b)]
    return model


def build_model(case: Case):
    import torch
    from transformers import AutoModelForCausalLM

    cfg = case_config(case)
    dtype = weight_dtype(case)
    fake = case.method == "fake"
    torch.manual_seed(0)
    dev_ctx = torch.device("meta") if fake else contextlib.nullcontext()
    with dev_ctx:
        model = AutoModelForCausalLM.from_config(
            cfg, dtype=dtype, attn_implementation=case.attention
        )
        if case.lora_rank:
            from peft import LoraConfig, get_peft_model

            lcfg = LoraConfig(
                r=case.lora_rank,
                lora_alpha=2 * case.lora_rank,
                lora_dropout=0.0,
                target_modules=lora_target_modules(case, cfg.model_type),
                bias="none",
                task_type="CAUSAL_LM",
            )
            model = get_peft_model(model, lcfg)
        if case.checkpointing:
            model.gradient_checkpointing_enable()
    fake_mode = None
    if fake:
        from torch._subclasses.fake_tensor import FakeTensorMode

        fake_mode = FakeTensorMode()
        fakeify(model, fake_mode)
    return model, fake_mode, cfg


# --------------------------------------------------------------------------------------
# Steps
# --------------------------------------------------------------------------------------


def run_phase(case: Case, model, optimizer, ids, tracker=None, warmup=False):
    import torch

    def before_forward():
        if tracker is not None:
            tracker.reset_mod_stats()

    if case.phase == "prefill":
        model.eval()
        with torch.no_grad():
            before_forward()
            kw = {} if case.logits_to_keep is None else {"logits_to_keep": case.logits_to_keep}
            out = model(input_ids=ids, use_cache=True, **kw)
        del out
    elif case.phase == "generate":
        model.eval()
        with torch.no_grad():
            before_forward()
            out = model(input_ids=ids, use_cache=True, logits_to_keep=1)
            cache = out.cache
            tok = out.logits[:, -1, :].to(copy=True, dtype=torch.float32).argmax(-1, keepdim=True)
            del out
            seqs = torch.cat([ids, tok], dim=-1)
            # the warm-up run only needs the prefill and one decode step (no state to build up)
            n_decode = 1 if warmup else case.generate - 1
            for _ in range(n_decode):
                before_forward()
                out = model(input_ids=tok, cache=cache, use_cache=True, logits_to_keep=1)
                cache = out.cache
                tok = (
                    out.logits[:, -1, :].to(copy=True, dtype=torch.float32).argmax(-1, keepdim=True)
                )
                del out
                seqs = torch.cat([seqs, tok], dim=-1)
            del cache, seqs, tok
    elif case.phase == "train_step":
        model.train()
        ac = (
            torch.autocast("cpu", dtype=torch.bfloat16)
            if case.precision == "bf16-mixed"
            else contextlib.nullcontext()
        )
        before_forward()
        with ac:
            out = model(input_ids=ids, labels=ids, use_cache=False)
        loss = out.loss
        del out
        loss.backward()
        del loss
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    else:
        raise ValueError(case.phase)


def measure_case(case: Case) -> dict:
    import peft
    import torch
    import transformers

    install_allocator_rounding()
    model, fake_mode, cfg = build_model(case)
    mode_ctx = fake_mode if fake_mode is not None else contextlib.nullcontext()
    t0 = time.time()
    with mode_ctx, cuda_like_dropout(), unpacked_sequences(fake_mode is not None):
        ids = torch.randint(0, cfg.vocab_size, (case.batch, case.seq))
        optimizer = None
        if case.phase == "train_step":
            params = [p for p in model.parameters() if p.requires_grad]
            optimizer = torch.optim.AdamW(params, lr=1e-4, foreach=True)
        run_phase(case, model, optimizer, ids, warmup=True)  # iteration 1 (creates optimizer state)
        gc.collect()
        tracker = make_tracker()
        tracker.track_external(model, ids, *([optimizer] if optimizer is not None else []))
        with tracker:
            run_phase(case, model, optimizer, ids, tracker)  # iteration 2 (measured)
        peak = tracker.get_tracker_snapshot("peak")
    elapsed = time.time() - t0

    cats = {col: 0 for col in CATEGORY_COLUMNS.values()}
    total = 0
    for _dev, snap in peak.items():
        for k, v in snap.items():
            key = getattr(k, "value", k)
            if key == "Total":
                total += v
            else:
                cats[CATEGORY_COLUMNS[key]] += v
    assert sum(cats.values()) == total, (cats, total)
    row = {
        "case": case.name,
        "model": case.model,
        "config_file": case.config_file,
        "task": case.task,
        "phase": case.phase,
        "precision": case.precision,
        "optimizer": case.optimizer,
        "batch": case.batch,
        "seq": case.seq,
        "generate": case.generate,
        "checkpointing": int(case.checkpointing),
        "attention": case.attention,
        "lora_rank": case.lora_rank,
        "lora_targets": lora_targets_column(case, cfg.model_type, model),
        "peak_bytes": total,
        **cats,
        "method": case.method,
        "torch_version": torch.__version__,
        "transformers_version": transformers.__version__,
        "peft_version": peft.__version__,
        "measured_on": MEASURED_ON,
    }
    if case.variant:
        row["variant"] = case.variant
        row["note"] = (
            "logits_to_keep=1"
            if case.logits_to_keep == 1
            else "GPT-2 attn_pdrop=0.1 kept: SDPA on CPU uses the math kernel "
            "(no dropout in CPU flash)"
        )
    del model, optimizer, tracker
    gc.collect()
    row["_seconds"] = round(elapsed, 1)
    return row


# --------------------------------------------------------------------------------------
# Parameter counts
# --------------------------------------------------------------------------------------


def count_params_for_file(config_file: str) -> tuple[dict | None, str | None]:
    import torch
    import transformers
    from transformers import AutoModelForCausalLM

    try:
        cfg = build_config(config_file)
    except Exception as e:
        return None, f"config not buildable: {type(e).__name__}: {e}"
    archs = getattr(cfg, "architectures", None) or []
    cls = getattr(transformers, archs[0], None) if archs else None
    try:
        with torch.device("meta"):
            if cls is not None:
                model = cls._from_config(cfg, dtype=torch.bfloat16)
            else:
                model = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
    except Exception as e:
        return None, f"model not buildable: {type(e).__name__}: {str(e)[:200]}"
    total = sum(p.numel() for p in model.parameters())
    lora = ""
    try:
        from peft import LoraConfig, get_peft_model

        with torch.device("meta"):
            pm = get_peft_model(
                model,
                LoraConfig(
                    r=16,
                    lora_alpha=32,
                    lora_dropout=0.0,
                    target_modules=qkvo_targets(cfg.model_type),
                    bias="none",
                ),
            )
        lora = sum(p.numel() for p in pm.parameters() if p.requires_grad)
        note = None
    except Exception as e:
        note = f"LoRA count failed: {type(e).__name__}: {str(e)[:200]}"
    row = {
        "model": model_id_for_file(config_file),
        "config_file": config_file,
        "total_params": total,
        "trainable_lora_params_r16_qkvo": lora,
    }
    return row, note


def param_counts_task() -> tuple[list[dict], list[str]]:
    import transformers

    transformers.logging.set_verbosity_error()
    rows, notes = [], []
    for f in sorted(p.name for p in CONFIG_DIR.glob("*.json")):
        row, note = count_params_for_file(f)
        if row is not None:
            rows.append(row)
        if note:
            notes.append(f"{f}: {note}")
        gc.collect()
    return rows, notes


# --------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------

# Date of the measurement run (the brief's "today"); override with WHICHGPU_MEASURED_ON.
MEASURED_ON = os.environ.get("WHICHGPU_MEASURED_ON", "2026-11-29")


def _worker_init(threads: int):
    import warnings

    import torch
    import transformers

    torch.set_num_threads(threads)
    transformers.logging.set_verbosity_error()
    warnings.filterwarnings("ignore")


def _run_case_safe(case: Case):
    try:
        return case.name, measure_case(case), None
    except Exception:
        return case.name, None, traceback.format_exc()


def _read_rows(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def _write_rows(path: Path, rows: list[dict], columns: list[str]):
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow(r)


def select(cases: list[Case], patterns: list[str] | None) -> list[Case]:
    if not patterns:
        return cases
    return [c for c in cases if any(fnmatch.fnmatchcase(c.name, p) for p in patterns)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="measurements CSV")
    ap.add_argument("--only", nargs="+", metavar="CASE", help="case names or fnmatch patterns")
    ap.add_argument(
        "--jobs", type=int, default=max(1, (os.cpu_count() or 1)), help="worker processes"
    )
    ap.add_argument("--list", action="store_true", help="list case names and exit")
    ap.add_argument("--params-out", type=Path, default=DEFAULT_PARAMS_OUT)
    ap.add_argument("--no-params", action="store_true", help="skip param_counts.csv")
    ap.add_argument("--ablations-out", type=Path, default=DEFAULT_ABLATION_OUT)
    ap.add_argument("--no-ablations", action="store_true", help="skip memory_ablations.csv")
    ap.add_argument("--no-real", action="store_true", help="skip real-tensor cross-check cases")
    args = ap.parse_args(argv)

    cases = all_cases()
    if args.no_real:
        cases = [c for c in cases if c.method != "real"]
    ablations = [] if args.no_ablations else build_ablation_cases()
    if args.only:
        cases = select(cases, args.only)
        ablations = select(ablations, args.only)
    if args.list:
        for c in cases + ablations:
            print(c.name)
        return 0
    do_params = not args.no_params and not args.only

    # Real-tensor cases allocate real memory: run them one at a time after the fake ones.
    fake_cases = [c for c in cases + ablations if c.method == "fake"]
    real_cases = [c for c in cases if c.method == "real"]
    # largest models first for better load balance
    order = {
        m: i
        for i, m in enumerate(
            [
                "llama-2-13b",
                "llama-3.1-8b",
                "mistral-7b-v0.3",
                "llama-2-7b",
                "llama-3.2-1b",
                "qwen2.5-0.5b",
                "gpt2",
            ]
        )
    }
    fake_cases.sort(key=lambda c: (order[c.model], c.phase != "generate"))

    results: dict[str, dict] = {}
    failures: dict[str, str] = {}
    t_start = time.time()
    ctx = get_context("spawn")
    threads = max(1, (os.cpu_count() or 1) // max(1, args.jobs))

    def _consume(futs):
        for fut in as_completed(futs):
            res = fut.result()
            name, row, err = res
            if row is not None:
                results[name] = row
                print(
                    f"[{time.time() - t_start:7.1f}s] {name}: "
                    f"peak {row['peak_bytes'] / 2**30:.3f} GiB "
                    f"({row.pop('_seconds')} s)",
                    flush=True,
                )
            else:
                failures[name] = err
                print(f"[{time.time() - t_start:7.1f}s] FAILED {name}\n{err}", flush=True)

    param_result = None
    # Fake cases run in `--jobs` workers; real-tensor cases (real allocations, up to ~10 GiB) run
    # one at a time in a separate single-threaded worker, concurrently.
    with contextlib.ExitStack() as stack:
        fake_pool = stack.enter_context(
            ProcessPoolExecutor(
                max_workers=args.jobs, mp_context=ctx, initializer=_worker_init, initargs=(threads,)
            )
        )
        futs = [fake_pool.submit(_run_case_safe, c) for c in fake_cases]
        if real_cases:
            real_pool = stack.enter_context(
                ProcessPoolExecutor(
                    max_workers=1, mp_context=ctx, initializer=_worker_init, initargs=(1,)
                )
            )
            futs += [real_pool.submit(_run_case_safe, c) for c in real_cases]
        pfut = fake_pool.submit(param_counts_task) if do_params else None
        _consume(futs)
        if pfut is not None:
            param_result = pfut.result()

    # main CSV: merge when --only, else rewrite
    main_names = [c.name for c in all_cases()]
    main_results = {k: v for k, v in results.items() if k in set(main_names)}
    if args.only:
        existing = {r["case"]: r for r in _read_rows(args.out)}
        existing.update(main_results)
        merged = [existing[n] for n in main_names if n in existing]
        merged += [r for n, r in existing.items() if n not in set(main_names)]
        _write_rows(args.out, merged, COLUMNS)
    else:
        _write_rows(args.out, [main_results[n] for n in main_names if n in main_results], COLUMNS)
    abl_names = [c.name for c in build_ablation_cases()]
    abl_results = {k: v for k, v in results.items() if k in set(abl_names)}
    if abl_results:
        existing = {r["case"]: r for r in _read_rows(args.ablations_out)} if args.only else {}
        existing.update(abl_results)
        # add the matching main-grid rows (logits_to_keep=0) for comparison, if present
        _write_rows(
            args.ablations_out, [existing[n] for n in abl_names if n in existing], ABLATION_COLUMNS
        )

    if param_result is not None:
        prow, pnotes = param_result
        _write_rows(args.params_out, prow, PARAM_COLUMNS)
        print(f"wrote {len(prow)} param-count rows to {args.params_out}")
        for n in pnotes:
            print("  param-count note:", n)

    # fake vs real cross-check
    ok = True
    by_name = {**{r["case"]: r for r in _read_rows(args.out)}, **results}
    for c in all_cases():
        if c.method != "real" or c.name not in by_name:
            continue
        fake_name = dataclasses.replace(c, method="fake").name
        if fake_name not in by_name:
            continue
        fr, rr = int(by_name[fake_name]["peak_bytes"]), int(by_name[c.name]["peak_bytes"])
        dev = abs(fr - rr) / rr
        flag = "OK " if dev <= 0.0025 else "BAD"
        ok &= dev <= 0.0025
        print(f"cross-check {flag} {fake_name}: fake {fr} real {rr} ({100 * dev:.4f} %)")

    print(f"{len(results)} cases measured, {len(failures)} failed, {time.time() - t_start:.0f} s")
    for n in failures:
        print("FAILED:", n)
    return 0 if not failures and ok else 1


if __name__ == "__main__":
    sys.exit(main())
