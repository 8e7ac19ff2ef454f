"""How the web pages name fields and actions in their messages: by the form's labels, in the
reader's language ("At most GPUs: must be …"), where the CLI names its flags (``--max-gpus``)
and the HTTP API its JSON paths (``constraints.max_gpus``). The labels are the forms' own
(the templates write the same strings; ``tests/test_web_api.py`` checks that they do)."""

from __future__ import annotations

from whichgpu.errors import Path, action_of, api_name
from whichgpu.i18n import N_, _, fmt

#: Each form field's label, as the page writes it.
FIELD_LABELS: dict[str, str] = {
    "task": N_("Task"),
    "model": N_("Model preset"),
    "params": N_("or a generic size"),
    "config": N_("or a config.json (at most 1 MiB)"),
    "precision": N_("Precision"),
    "quant": N_("Quantized weights"),
    "checkpointing": N_("Activation checkpointing"),
    "nvlink_bridge": N_("NVLink bridges (PCIe pairs)"),
    "batch": N_("Batch"),
    "seq": N_("Sequence, tokens"),
    "prompt": N_("Prompt, tokens"),
    "generate": N_("Generated, tokens"),
    "shared_prefix": N_("Shared prefix, tokens"),
    "speculative": N_("Speculative decoding"),
    "layout": N_("Serving layout"),
    "recompute_layers": N_("Layers recomputed a chunk (Megatron, NeMo)"),
    "memory_format": N_("Activations in memory (a CNN)"),
    "draft_tokens": N_("Draft tokens a step"),
    "acceptance": N_("Acceptance length, tokens a step"),
    "tokens": N_("Tokens (train on or generate)"),
    "images": N_("Images per epoch"),
    "resolution": N_("Resolution, px"),
    "steps": N_("Denoising steps"),
    "epochs": N_("Epochs"),
    "frames": N_("Frames (render)"),
    "scene_gib": N_("Scene memory, GiB (render)"),
    "tflop": N_("TFLOP (FP64)"),
    "hours": N_("Hours of use"),
    "request_rate": N_("Requests per second"),
    "engine": N_("Serving engine"),
    "lengths": N_("Lengths of a dataset"),
    "kv_dtype": N_("KV cache"),
    "ttft": N_("Time to first token"),
    "tpot": N_("Time per output token"),
    "percentile": N_("Latency percentile"),
    "budget_usd": N_("Budget, US$"),
    "budget_usd_per_h": N_("Budget, US$ per hour"),
    "deadline": N_("Deadline"),
    "max_gpus": N_("At most GPUs"),
    "mode": N_("Rent or buy"),
    "objective": N_("Objective"),
    "baseline": N_("A GPU you had in mind"),
    "catalog": N_("Catalog"),
    "gpu": N_("GPU"),
    "count": N_("GPUs"),
    "framework": N_("Framework"),
    "global_batch": N_("Global batch"),
    "tp": N_("Tensor parallel"),
    "pp": N_("Pipeline stages"),
    "arch": N_("Architecture"),
    "min_vram": N_("At least VRAM, GB"),
}

#: The request types' names for fields the forms name otherwise.
FORM_NAMES = {"deadline_h": "deadline", "kind": "task"}

#: Where a page sends its reader for what the CLI does with a command.
PAGE_ACTIONS = {
    "@fit": N_("the Fit page"),
    "@gpus": N_("the Catalog page"),
    "@models": N_("the Model preset list"),
    "@prices-update": N_("the server's 'whichgpu prices update'"),
}


def form_name(path: Path) -> str | None:
    """The form field a path names (its last key, as the form calls it)."""
    keys = [part for part in path if isinstance(part, str)]
    return FORM_NAMES.get(keys[-1], keys[-1]) if keys else None


def page_field_name(path: Path) -> str:
    """A field or an action as the pages name it: the form's label, translated; a field no
    form has by its JSON path."""
    action = action_of(path)
    if action is not None:
        return _(PAGE_ACTIONS[action])
    label = FIELD_LABELS.get(form_name(path) or "")
    return _(label) if label else api_name(path)


def page_ref_name(path: Path) -> str:
    """A field set into a sentence on the pages: its label quoted as a name (give “Batch”
    to set it; « Batch », 「バッチ」), an action as :func:`page_field_name` names it."""
    name = page_field_name(path)
    if action_of(path) is not None or not FIELD_LABELS.get(form_name(path) or ""):
        return name
    return fmt(_("“{label}”"), label=name)


#: The pages name a field set into a sentence with its label quoted (errors.naming_fields)
page_field_name.in_sentence = page_ref_name  # type: ignore[attr-defined]
