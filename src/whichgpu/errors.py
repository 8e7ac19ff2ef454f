"""One exception tree for everything a user can get wrong, as data.

An :class:`InvalidInput` is a code, its parameters and the path of the field at fault
(``("components", 0, "tokens")``); nothing is rendered when it is raised. Each shell renders
it at its edge, in the reader's language (a context variable of :mod:`whichgpu.i18n`), naming
the field the way its user wrote it: the CLI flag (``--tokens``), the file's line and key
(``job.toml:7: components.0.tokens``) or the JSON path (``components.0.tokens``), set with
:func:`naming_fields`. ``str()`` of any error is that one line. The CLI prints it and exits
with code 2; the HTTP API answers 4xx with the code, the field and the message. Nothing here
is raised for a bug in whichgpu itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from whichgpu.i18n import N_, _, fmt

#: Where a value sits in a request: keys and list indexes from the top.
Path = tuple[str | int, ...]


class Word(str):
    """A parameter that is itself a message id (``Word(N_("task"))``): translated when the
    error is rendered, like the template."""

    __slots__ = ()


class Ref(tuple[str | int, ...]):
    """A parameter naming another field (``Ref(("tp",))``): rendered as the shell names
    fields (``--tp`` in the CLI)."""

    __slots__ = ()


#: Things a message tells the reader to go to, named by the shell they read it in: a
#: :class:`Ref` whose path is ``("@gpus",)`` is a command in the CLI (``'whichgpu gpus'``),
#: an endpoint in the HTTP API, a function in Python, a page in the web app
#: (:mod:`whichgpu.web.labels`).
API_ACTIONS = {
    "@fit": "POST /api/v1/fit",
    "@gpus": "GET /api/v1/gpus",
    "@models": "GET /api/v1/models",
    "@prices-update": "'whichgpu prices update'",
}
PYTHON_ACTIONS = {
    "@fit": "whichgpu.fit()",
    "@gpus": "whichgpu.load_catalog().gpus",
    "@models": "whichgpu.list_models()",
    "@prices-update": "'whichgpu prices update'",
}


def action_of(path: Path) -> str | None:
    """The action a :class:`Ref` path names (``"@gpus"``), or None for a field."""
    head = path[0] if path else None
    return head if isinstance(head, str) and head.startswith("@") else None


#: The longest key of a path echoed in a message: a key is the user's text (an unknown
#: field of 10,000 characters comes back as its head and tail).
MAX_KEY_CHARS = 40


def dotted(path: Path) -> str:
    """A field's JSON path: ``components.0.tokens`` (a key past :data:`MAX_KEY_CHARS`
    shortened)."""
    return ".".join(_short_key(str(p)) for p in path)


def _short_key(key: str) -> str:
    """A key as a message echoes it: on one line (control characters escaped), within
    :data:`MAX_KEY_CHARS`."""
    if not key.isprintable():
        key = key.encode("unicode_escape").decode("ascii")
    if len(key) <= MAX_KEY_CHARS:
        return key
    return key[: MAX_KEY_CHARS - 11] + "…" + key[-10:]


def api_name(path: Path) -> str:
    """A field as the HTTP API names it (its JSON path), an action by its endpoint."""
    action = action_of(path)
    return API_ACTIONS[action] if action is not None else dotted(path)


def python_name(path: Path) -> str:
    """A field as the Python API names it (its path), an action by its function."""
    action = action_of(path)
    return PYTHON_ACTIONS[action] if action is not None else dotted(path)


_field_namer: ContextVar[Callable[[Path], str]] = ContextVar(
    "whichgpu_field_namer", default=python_name
)


_ref_namer: ContextVar[Callable[[Path], str] | None] = ContextVar(
    "whichgpu_ref_namer", default=None
)


@contextmanager
def naming_fields(
    namer: Callable[[Path], str], in_sentence: Callable[[Path], str] | None = None
) -> Iterator[None]:
    """Inside the block, errors name fields with ``namer`` (the CLI: its flags), and a
    field set into a sentence (a :class:`Ref`: "give --batch to set it") with
    ``in_sentence`` where it differs, else the namer's own ``in_sentence`` attribute where it
    has one (the pages quote their labels there)."""
    token = _field_namer.set(namer)
    ref_token = _ref_namer.set(in_sentence or getattr(namer, "in_sentence", None))
    try:
        yield
    finally:
        _field_namer.reset(token)
        _ref_namer.reset(ref_token)


def field_name(path: Path) -> str:
    return _field_namer.get()(path)


def ref_name(ref: Path) -> str:
    """A field named inside a sentence (:func:`naming_fields`)."""
    namer = _ref_namer.get()
    return namer(ref) if namer is not None else field_name(ref)


class WhichGPUError(Exception):
    """Base class: bad input from a user, a user file or a catalog file. ``str()`` of any of
    them is its one-line message, in the current language."""

    code = "invalid_data"

    def message(self) -> str:
        return super().__str__()

    def __str__(self) -> str:
        return self.message()


#: Every input error's code and message. Parameters: ``hint`` is a closest match ("" for
#: none); a :class:`Word` is translated, a :class:`Ref` is a field's name.
MESSAGES: dict[str, str] = {
    # any field
    "unknown_field": N_("unknown field; valid: {valid}{hint}"),
    "missing_field": N_("missing; one of: {valid}"),
    "unknown_value": N_("unknown value {value!r}; valid: {valid}{hint}"),
    "out_of_range": N_("must be a number from {low:g} to {high:g} (got {value!r})"),
    "out_of_range_int": N_("must be a whole number from {low} to {high:,} (got {value!r})"),
    "at_least": N_("must be at least {low:g} (got {value!r})"),
    "not_whole": N_("must be a whole number (got {value!r})"),
    "not_a_number": N_("must be a number (got {value!r})"),
    "not_finite": N_("must be a finite number (got {value!r})"),
    "not_a_size": N_("takes a size like 7B, 350M or 1.5e9 (got {value!r})"),
    "not_a_duration": N_("takes a duration like 48h, 3d or 90min (got {value!r})"),
    "not_a_latency": N_("takes a latency like 2s or 150ms (got {value!r})"),
    "unit_required": N_("{value} what? give its unit, e.g. {example}"),
    "not_bool": N_("must be true or false (got {value!r})"),
    "not_a_list": N_("must be a list of: {valid}"),
    "not_text": N_("must be text (got {value!r})"),
    "too_long": N_("must be at most {n} characters"),
    "too_many": N_("at most {n} items"),
    "too_many_replicas": N_("{total} replicas in all; a MIG plan places at most {n}"),
    # data from outside, past its limits (whichgpu.untrusted)
    "too_deep": N_("nested more than {depth} levels deep"),
    "too_many_values": N_(
        "holds more than {n:,} values (a YAML alias counts each time it is used)"
    ),
    "number_too_long": N_("holds a number of more than {digits} digits"),
    "null_value": N_("null is not a value here: leave the field out for its default"),
    "file_too_large": N_("the file is {size:,} bytes; at most {limit:,} are read"),
    "bad_job_name": N_(
        "{value!r} is not a valid job name: lowercase letters, digits and '-', at most 63, "
        "starting and ending with a letter or digit (try {suggestion!r})"
    ),
    "empty_run": N_("an empty command: give the command the job runs"),
    "recompute_contradicts": N_(
        "{checkpointing} asks for recomputation '{given}' and {recompute} for '{mode}': give one"
    ),
    "json_and_export": N_("--json and --export print different things: give one"),
    "not_for_kind": N_("{kind} does not use it; {kind} takes {valid}"),
    "not_for_kind_at_all": N_("{kind} does not use it"),
    "epochs_without_size": N_("passes over a dataset whose size is not given: give {sizes}"),
    "unknown_family": N_("no model of family {value!r}; the families: {valid}"),
    "buy_only": N_("applies only to buying (mode buy)"),
    "count_splits_heads": N_(
        "{count} GPUs do not split the model's {heads} attention ({kv_heads} KV) heads for "
        "tensor parallelism; counts that do: {valid}"
    ),
    "config_missing_file": N_("names {path}, which is not a file (unset it to use no config)"),
    "not_a_table": N_("must be a table of fields"),
    "not_json": N_("not valid JSON ({reason})"),
    "not_yaml": N_("not valid YAML: {reason}"),
    "not_toml": N_("not valid TOML: {reason}"),
    "not_utf8": N_("not UTF-8 text"),
    "unreadable": N_("cannot read it: {reason}"),
    "unwritable": N_("cannot write {path}: {reason}"),
    "bad_today": N_("WHICHGPU_TODAY must be a date like 2026-11-29 (got {value!r})"),
    # files and caches (hostile input)
    "not_regular_file": N_("is {kind}, not a regular file"),
    "file_over_limit": N_("the file holds more than {limit:,} bytes; at most {limit:,} are read"),
    "stdout_failed": N_("cannot write to standard output: {reason}"),
    "not_a_date": N_("must be a date like 2026-11-29, 2026-11 or 2026 (got {value!r})"),
    "date_in_future": N_("{value} is in the future (today is {today})"),
    "date_too_old": N_("{value} is before {low}: not a date of a price"),
    "snapshot_corrupt": N_("not a price snapshot ({reason})"),
    "snapshot_changed": N_("changed since it was fetched (its SHA-256 is not the one recorded)"),
    "snapshot_ignored": N_(
        "{problem}; the price snapshot is ignored, the shipped prices are in use "
        "({update} fetches a new one)"
    ),
    "snapshot_cloud_ignored": N_(
        "{problem}; the snapshot's {cloud} offers are left out ({update} fetches them again)"
    ),
    # names
    "unknown_feature": N_("unknown feature {name!r}; valid features: {valid}"),
    "unknown_market": N_("unknown market {name!r}; valid markets: {valid}"),
    "no_gpu_to_compare": N_("name at least one GPU to compare"),
    "gpu_listed_twice": N_("{name!r} names {gpu}, which is already in the comparison"),
    "no_mig": N_("{gpu} has no MIG; MIG GPUs: {gpus}"),
    # models
    "model_or_size": N_('give a model preset or a size (params = "7B")'),
    "model_and_config": N_("give a model, params or a config, only one"),
    "model_file_and_preset": N_("give a model file or a preset, not both"),
    "params_range": N_("must be between 1M and 10T parameters (got {value!r})"),
    "takes_no_model": N_("a {kind} component takes no model"),
    "config_not_object": N_("config.json must be a JSON object"),
    "config_no_model_type": N_("config.json: missing 'model_type'"),
    "config_model_type": N_(
        "config.json: model_type {family!r} is not supported; supported: {valid}"
    ),
    "config_missing": N_("config.json ({family}): missing {key!r}"),
    "config_whole": N_("config.json: {key!r} must be a whole number >= 0 (got {value!r})"),
    "config_positive": N_("config.json: layers, hidden size and attention heads must be positive"),
    "config_positive_key": N_("config.json: {key!r} must be at least 1 (got {value!r})"),
    "config_too_large": N_("config.json: {key!r} is at most {high:,} (got {value!r})"),
    "config_kv_heads": N_(
        "config.json: {kv_heads} key/value heads must divide the {heads} attention heads"
    ),
    "config_heads": N_(
        "config.json: the hidden size {hidden} is not a multiple of the {heads} attention heads"
    ),
    "vit_config": N_("ViT config.json: missing or bad {key}"),
    "resnet_bottleneck": N_("ResNet config.json: only bottleneck ResNets are supported"),
    "resnet_config": N_("ResNet config.json: missing or bad {key}"),
    "preset_metadata": N_("preset {name}: missing its _whichgpu metadata"),
    "hub_missing": N_("needs huggingface_hub: pip install 'whichgpu[hub]'"),
    "hub_fetch": N_("could not fetch {repo}/config.json from the Hub: {reason}"),
    "price_fetch": N_(
        "could not fetch {url}: {reason} (nothing changed: the prices in use are as before)"
    ),
    "learned_positions": N_(
        "{model} has {n} learned positions: sequences of {tokens} tokens "
        "do not fit (give {seq}, or {prompt} + {generate}, of at most {n})"
    ),
    # jobs
    "gpus_multiple": N_("must be a multiple of {tp} × {pp} × {cp} ({n}); got {gpus}"),
    "cp_sequence": N_(
        "context parallelism of {cp} splits a training sequence into {split} chunks (two a "
        "GPU, for the causal mask's balance, as Megatron-LM requires): the sequence, {seq} "
        "tokens, must be a multiple of {split}"
    ),
    "tp_heads": N_(
        "{tp} GPUs of tensor parallelism do not split {model}'s {heads} attention heads"
    ),
    "pp_layers": N_("{pp} pipeline stages need a layer each; {model} has {layers}"),
    "serving_no_fit": N_("{model} does not fit {count} × {gpu} with room for one sequence"),
    "latency_out_of_reach_on": N_(
        "{target} {percentile} of {limit_ms:,} ms is out of reach for {model} on {count} × "
        "{gpu}: {best_ms:,} ms at the lightest load at the slow end of the estimate's likely "
        "range ({point_ms:,} ms at its middle)"
    ),
    "latency_out_of_reach": N_(
        "{target} {percentile} of {limit_ms:,} ms is out of reach for {component}: the "
        "nearest is {option}, {best_ms:,} ms at the lightest load"
    ),
    "latency_out_of_reach_likely": N_(
        "{target} {percentile} of {limit_ms:,} ms is out of reach for {component}: the "
        "nearest is {option}, {best_ms:,} ms at the lightest load at the slow end of the "
        "estimate's likely range ({point_ms:,} ms at its middle; {setting} point holds the "
        "targets at the middle)"
    ),
    "serving_context": N_(
        "{model} reads {n:,} tokens at most; {prompt} + {generate} asks for {tokens:,}"
    ),
    "lengths_and_tokens": N_(
        "{name}'s means ({prompt} tokens in, {generate} out) set the lengths: give them or "
        "{prompt_field} and {generate_field}, not both"
    ),
    "kv_dtype_format": N_(
        "no engine that runs {quant} weights ({engines}) keeps its KV cache in {kv}"
    ),
    "engine_kv_dtype": N_(
        "{engine} keeps no {kv} KV cache (16 bits or its own formats); engines that do: {instead}"
    ),
    "quant_experts_only": N_(
        "{quant} quantises a mixture of experts' expert weights (gpt-oss's checkpoints); "
        "{model} has no experts: give int4 or fp8 for its weights"
    ),
    "engine_format": N_(
        "{engine} does not run {quant} weights (it runs {valid}); engines that do: {instead}"
    ),
    "vp_needs_pp": N_("{vp} virtual pipeline stages need a pipeline: set {pp} above 1"),
    "vp_layers": N_(
        "{vp} virtual stages need a layer each; {model} over {pp} pipeline stages has {layers} "
        "in the largest"
    ),
    "global_batch_split": N_(
        "a global batch of {global_batch} is not a whole number of steps of {per_step} "
        "(micro-batch {batch} × {dp} data-parallel GPUs)"
    ),
    "lora_targets_unknown": N_("{model} has no linear module {names}; valid: {valid}{hint}"),
    "lora_targets_empty": N_("LoRA targets '{value}' name no module; valid: {valid}"),
    "zero_inference": N_("ZeRO shards training state; inference shards weights with {tp}"),
    "engine_cuda_only": N_(
        "{engine} runs on NVIDIA GPUs only (CUDA), not on the {gpu}; engines that run there: "
        "{instead}"
    ),
    "engine_min_capability": N_(
        "{engine} runs from compute capability {needed}; the {gpu} has {has}; engines that run "
        "there: {instead}"
    ),
    "engine_capability": N_(
        "{engine} runs {quant} weights from compute capability {needed}; the {gpu} has {has}; "
        "engines that run them there: {instead}"
    ),
    "pp_inference": N_(
        "pipeline stages are planned for training; a served model is split with {tp}"
    ),
    "inference_tp_count": N_(
        "{tp} GPUs a copy makes {replicas} copies of the model on {count} GPUs, which only "
        "the serving planner sizes: give {engine} too, or {count} to split one copy over all"
    ),
    "utilization_inference": N_("is for inference (the task is {task})"),
    "images_model": N_("{model} works on images: give {images}, not {tokens}"),
    "tokens_model": N_("{model} works on tokens: give {tokens}, not {images}"),
    "precision_unsupported": N_(
        "the {gpu} has no {unit} tensor cores for {precision}; {instead} runs there"
    ),
    "no_throughput_model": N_("no throughput model for {workload} on {gpu}"),
    "estimate_needs_model": N_("estimate needs a preset model ({model}) or {params}"),
    # recommend
    "give_workload": N_("give a workload: {task} (with {model} or {params}) or {file}"),
    "file_and_flags": N_("{file} describes the components; drop {flag} or put it in the file"),
    "rate_for_inference": N_("a request rate is for inference"),
    "size_or_hours": N_("give a job size ({size}) or hours of use, not both"),
    "render_frames": N_("a render component needs frames (or hours)"),
    "speculative_needs_method": N_(
        "draft tokens and an acceptance length describe speculative decoding: give {speculative} "
        "(eagle3, mtp or ngram)"
    ),
    "quantize_on_without_quant": N_(
        "where weights are quantised means nothing without a weight format: give {quant}"
    ),
    "engine_speculative": N_("{engine} runs no {method} drafter; these do: {instead}"),
    "speculative_not_served": N_(
        "speculative decoding is planned for a served model: give a request rate, a latency "
        "target or an engine"
    ),
    "speculative_training": N_("speculative decoding is a served model's: a training job has none"),
    "speculative_no_mtp": N_(
        "{model} ships no multi-token prediction module (DeepSeek-V3 and R1 do): use eagle3 "
        "or ngram"
    ),
    "speculative_acceptance": N_(
        "an acceptance length of {value} tokens a step is outside 1 to {high} (a step of {k} "
        "draft tokens yields at most {high})"
    ),
    "shared_prefix_training": N_("a shared prefix is a served model's: a training job has none"),
    "shared_prefix_longer": N_(
        "a shared prefix of {shared} tokens leaves nothing of the prompt ({prompt} tokens) "
        "to prefill: it is the start every prompt has in common, shorter than the prompt"
    ),
    "render_scene_no_fit": N_(
        "the scene needs {needed} GiB on each GPU with the CUDA context; the {gpu} holds "
        "{capacity} GiB: choose a GPU with more memory"
    ),
    "image_resolution_stride": N_(
        "resolution {resolution} px: {model} takes sides that are multiples of {stride} px "
        "(try {low:d} or {high:d})"
    ),
    "image_quant": N_("image generation loads weights as {valid}, not {quant}"),
    "model_is_pipeline": N_(
        "{name} is an image-generation model: set {task} to image (generate), image-lora or "
        "image-finetune (fine-tune)"
    ),
    "image_optimizer": N_("image fine-tuning runs {valid}, not {optimizer}"),
    "image_quant_full": N_(
        "a full fine-tune trains every weight in FP32: a {quant} base is for image-lora"
    ),
    "image_precision": N_("image generation runs in {valid}, not {precision}"),
    "image_needs_pipeline": N_(
        "image generation needs an image model preset: sd-1.5, sdxl, sd-3-medium, "
        "sd-3.5-large, flux.1-dev or flux.1-schnell ({listing})"
    ),
    "fp64_tflop": N_("an fp64 component needs tflop of work (or hours)"),
    "no_market": N_("name at least one market"),
    "no_components": N_("give at least one [[components]] table"),
    "not_a_workload": N_("a workload file is a table of fields"),
    # mig
    "service_model_and_memory": N_("give a service's model or its memory_gib, not both"),
    "no_services": N_("give at least one service (or profiles and a gpu)"),
    "services_and_profiles": N_("give services or profiles, not both"),
    "profiles_need_gpu": N_("profiles need the gpu they are for"),
    "no_profiles": N_("name at least one MIG profile"),
    "file_and_service_flags": N_("{file} describes the services; drop the service flags"),
    "give_service": N_("give a service: {model}, {params} or {memory} (or {file})"),
    "no_service_tables": N_("give at least one [[services]] table"),
    # export
    "skypilot_name": N_(
        "SkyPilot has no accelerator name for {gpu} in whichgpu's catalog; the best option "
        "it names is {option} (accelerators: {accelerators}), or export to kubernetes or slurm"
    ),
    "skypilot_no_name": N_(
        "SkyPilot has no accelerator name for {gpu} in whichgpu's catalog, nor for another "
        "option: export to kubernetes or slurm"
    ),
    "skypilot_mig": N_("SkyPilot rents whole GPUs; export a MIG plan to kubernetes"),
    "slurm_mig": N_("export a MIG plan to kubernetes, or configure MIG GRES in Slurm"),
    "kubernetes_nodes": N_(
        "{n} GPUs span nodes: export to skypilot or slurm, or use a multi-node operator "
        "(Kubeflow PyTorchJob to train, LeaderWorkerSet to serve)"
    ),
    "nothing_to_export": N_("nothing to export: no option meets the workload's constraints"),
    "deploy_not_served": N_(
        "{system} deploys a served model; export a training job to skypilot, kubernetes or slurm"
    ),
    "deploy_engine": N_(
        "this export writes {system}'s workers for {valid}, not {engine}: give --engine with "
        "one of them, or export to skypilot, kubernetes or slurm"
    ),
    "deploy_mig": N_("{system}'s workers take whole GPUs; export a MIG plan to kubernetes"),
    "deploy_rocm": N_("whichgpu knows no ROCm image of {engine} for the {gpu}: give --image"),
    "export_replica_spans": N_(
        "a serving replica of the pick takes {gpus} GPUs, more than an instance of {per_node} "
        "holds: the export starts one server a node, no multi-node launch (Ray, MPI)"
    ),
    "deploy_vendor": N_(
        "{system}'s pods here ask for NVIDIA GPUs and CUDA images, not the {gpu}: give "
        "--requires cuda, or export to skypilot or slurm"
    ),
    "deploy_checkpoint": N_(
        "the pick loads a pre-quantized checkpoint whichgpu cannot name; export to skypilot "
        "or slurm, which read it from $WHICHGPU_MODEL"
    ),
    # optional parts
    "missing_extra": N_("{feature} needs {modules}: pip install 'whichgpu[{extra}]'"),
    # the CLI's own options
    "plot_format": N_("writes .png or .svg files (got {path})"),
}


def _localize(value: Any) -> Any:
    if isinstance(value, Word):
        return _(value)
    if isinstance(value, Ref):
        return ref_name(value)
    return value


def render_message(code: str, params: Mapping[str, Any], english: bool = False) -> str:
    """The message of ``code`` filled with ``params``, in the current language."""
    template = MESSAGES[code]
    values = {k: _localize(v) for k, v in params.items()}
    if "hint" in values:
        match = values["hint"]
        values["hint"] = fmt(_(" (did you mean {match}?)"), match=match) if match else ""
    if english:
        return template.format(**values)
    return fmt(_(template), **values)


class InvalidInput(WhichGPUError):
    """A value out of range or of the wrong kind: ``code`` (a key of :data:`MESSAGES`), its
    ``params``, and ``field``, the path of the value at fault (None when no single field
    is). ``origin`` is where the request came from (``job.toml:7``), set by the parser of a
    file."""

    def __init__(self, code: str, /, field: Path | str | None = None, **params: Any) -> None:
        if code not in MESSAGES:
            raise KeyError(f"no message for error code {code!r}")
        super().__init__(code, field, params)
        self.code = code
        self.params = params
        self.field: Path | None = (field,) if isinstance(field, str) else field
        self.origin: str | None = None

    def text(self) -> str:
        """The message without the field's name."""
        return render_message(self.code, self.params)

    def where(self) -> str:
        if self.origin is not None:
            return self.origin + (f": {dotted(self.field)}" if self.field else "")
        return field_name(self.field) if self.field else ""

    def message(self) -> str:
        where = self.where()
        if not where:
            return self.text()
        return fmt(_("{field}: {problem}"), field=where, problem=self.text())


class InvalidInputs(InvalidInput):
    """Several fields at fault at once (a form's): the first as this error's own code,
    field and parameters, and every one in ``errors``."""

    def __init__(self, errors: list[InvalidInput]) -> None:
        first = errors[0]
        super().__init__(first.code, first.field, **first.params)
        self.errors = errors

    def message(self) -> str:
        return "; ".join(error.message() for error in self.errors)


class UnknownName(WhichGPUError):
    """A GPU (or other catalog) name that matches nothing."""

    code = "unknown_name"

    def __init__(
        self, kind: str, name: str, suggestions: tuple[str, ...], listing: str = "@gpus"
    ) -> None:
        super().__init__(kind, name, suggestions)
        self.kind = kind
        self.name = name
        #: The action that lists the valid names (``@gpus``, ``@models``: named by the
        #: shell, :data:`API_ACTIONS`)
        self.listing = listing
        self.suggestions = suggestions
        self.field: Path | None = None

    def message(self) -> str:
        if self.suggestions:
            return fmt(
                _("unknown {kind} {name!r}; closest matches: {matches}"),
                kind=self.kind,
                name=self.name,
                matches=", ".join(self.suggestions),
            )
        return fmt(
            _("unknown {kind} {name!r}; {listing} lists them"),
            kind=self.kind,
            name=self.name,
            listing=field_name((self.listing,)),
        )


class AmbiguousName(WhichGPUError):
    """A name that matches more than one catalog entry."""

    code = "ambiguous_name"

    def __init__(self, kind: str, name: str, matches: tuple[str, ...]) -> None:
        super().__init__(kind, name, matches)
        self.kind = kind
        self.name = name
        self.matches = matches
        self.field: Path | None = None

    def message(self) -> str:
        return fmt(
            _("ambiguous {kind} {name!r}: it matches {matches}; name one of them"),
            kind=self.kind,
            name=self.name,
            matches=", ".join(self.matches),
        )


class CatalogError(WhichGPUError):
    """A data file (shipped or the user's) that does not validate, naming its file and row."""

    def __init__(self, path: str, row: int | None, problem: str) -> None:
        super().__init__(path, row, problem)
        self.path = path
        self.row = row
        self.problem = problem
        self.field: Path | None = None

    def message(self) -> str:
        if self.row is None:
            return fmt(_("{path}: {problem}"), path=self.path, problem=self.problem)
        return fmt(
            _("{path}, row {row}: {problem}"), path=self.path, row=self.row, problem=self.problem
        )


def need_extra(extra: str, feature: str, *modules: str) -> None:
    """Raise one clear line when an optional part's packages are not installed (``serve``
    needs ``whichgpu[web]``, ``--plot`` needs ``whichgpu[plot]``), before any work."""
    from importlib.util import find_spec

    missing = [m for m in modules if find_spec(m) is None]
    if missing:
        raise InvalidInput(
            "missing_extra", feature=feature, modules=", ".join(missing), extra=extra
        )
