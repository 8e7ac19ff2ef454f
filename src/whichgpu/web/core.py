"""The web's shell over the library: one catalog per app, the language of each request, and
memoised results.

Everything here is framework-free (no FastAPI, no Jinja2): the routes in :mod:`.app` and
:mod:`.api` call these functions, which call the library exactly as the CLI does, so the API
returns the same JSON as each command's ``--json``.

The language of messages is a process-global of :mod:`whichgpu.i18n`; :func:`speaking` holds
one lock while a request computes and renders in its language and restores the previous
language afterwards, so concurrent requests in different languages never mix.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

import whichgpu.i18n as i18n
from whichgpu.errors import AmbiguousName, InvalidInput, UnknownName, WhichGPUError
from whichgpu.i18n import _, fmt

if TYPE_CHECKING:
    from whichgpu.catalog.store import Catalog
    from whichgpu.models.arch import ModelArch
    from whichgpu.recommender.engine import Recommendation
    from whichgpu.recommender.spec import Workload

LANGUAGES: dict[str, str] = {"en": "English", "fr": "Français", "ja": "日本語"}
DEFAULT_LANGUAGE = "en"
LANGUAGE_COOKIE = "whichgpu_lang"

#: Request bodies larger than this are refused with 413 (API and forms).
MAX_BODY_BYTES = 64 * 1024
#: An uploaded config.json may be this large (the recommend form's body gets this much more).
MAX_CONFIG_BYTES = 1024 * 1024

_LANGUAGE_LOCK = threading.RLock()


def pick_language(query: str | None, cookie: str | None, accept: str | None) -> str:
    """``?lang=``, then the cookie, then ``Accept-Language`` (by q-value), then English."""
    for given in (query, cookie):
        if given and given.strip().lower() in LANGUAGES:
            return given.strip().lower()
    if accept:
        ranked: list[tuple[float, int, str]] = []
        for position, item in enumerate(accept.split(",")):
            tag, _sep, params = item.strip().partition(";")
            quality = 1.0
            match = re.search(r"q\s*=\s*([0-9.]+)", params)
            if match:
                try:
                    quality = float(match.group(1))
                except ValueError:
                    quality = 0.0
            primary = tag.strip().lower().split("-")[0]
            if primary in LANGUAGES and quality > 0:
                ranked.append((-quality, position, primary))
        if ranked:
            return min(ranked)[2]
    return DEFAULT_LANGUAGE


@contextmanager
def speaking(language: str) -> Iterator[None]:
    """Compute and render in ``language`` while holding the process's language lock."""
    with _LANGUAGE_LOCK:
        before = i18n._language
        if before != language:
            i18n.set_language(language)
        try:
            yield
        finally:
            if before != language:
                i18n.set_language(before)


# -- errors --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    """A user error as the web reports it: an HTTP status and a JSON-able body."""

    status: int
    code: str
    message: str
    field: str | None = None
    closest: tuple[str, ...] = ()

    def doc(self) -> dict[str, Any]:
        return {
            "error": {
                "code": self.code,
                "message": self.message,
                "field": self.field,
                "closest": list(self.closest),
            }
        }


def problem_of(error: WhichGPUError, field: str | None = None) -> Problem:
    """404 for a name that matches nothing (with the closest matches), 422 otherwise.
    Call it while :func:`speaking`: the message is rendered now."""
    if isinstance(error, UnknownName):
        return Problem(404, "unknown_name", error.message(), field, tuple(error.suggestions))
    if isinstance(error, AmbiguousName):
        return Problem(422, "ambiguous_name", error.message(), field, tuple(error.matches))
    if isinstance(error, InvalidInput):
        return Problem(422, "invalid_input", error.message(), field)
    return Problem(422, "invalid_data", error.message(), field)


class FieldError(InvalidInput):
    """Bad input in a named form or body field."""

    def __init__(self, field: str, text: str) -> None:
        super().__init__(f"{field}: {text}")
        self.field = field


# -- memo ----------------------------------------------------------------------------------


class Memo:
    """A small thread-safe LRU of computed results keyed by their (canonical) inputs."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._items: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> Any:
        with self._lock:
            value = self._items.get(key)
            if value is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return value

    def put(self, key: str, value: Any) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


def memo_key(*parts: object) -> str:
    return json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)


def finite(value: Any) -> Any:
    """The document with non-finite floats (never valid JSON) as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def json_bytes(doc: Any) -> bytes:
    """UTF-8 JSON; the same values as ``--json`` prints (which indents)."""
    try:
        text = json.dumps(doc, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except ValueError:
        text = json.dumps(finite(doc), ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8")


# -- the library, called as the CLI calls it -----------------------------------------------


class Service:
    """One app's catalog (the shipped one with the user's configured prices, loaded once),
    the article's restriction of it, and a memo of results."""

    def __init__(self, catalog: Catalog | None = None) -> None:
        self._catalog = catalog
        self._article: Catalog | None = None
        self._load_lock = threading.Lock()
        self.memo = Memo()

    def catalog(self, name: str = "full") -> Catalog:
        with self._load_lock:
            if self._catalog is None:
                from whichgpu.catalog import load_catalog
                from whichgpu.userdata import catalog_with_user_data

                self._catalog, _skipped = catalog_with_user_data(load_catalog(), [], [])
            if name == "full":
                return self._catalog
            if name != "article":
                raise FieldError(
                    "catalog",
                    fmt(_("unknown catalog {value!r}; valid: full, article"), value=name),
                )
            if self._article is None:
                from whichgpu.article import ARTICLE_SOURCE, article_gpu_ids

                base = self._catalog
                self._article = base.restricted(article_gpu_ids(base), ARTICLE_SOURCE)
            return self._article

    @staticmethod
    def today() -> date:
        from whichgpu.userdata import today

        return today()

    # documents -------------------------------------------------------------------------
    def gpus_doc(
        self, min_vram: float | None, arch: str | None, features: Sequence[str]
    ) -> dict[str, Any]:
        from whichgpu.catalog.filters import filter_gpus
        from whichgpu.render.json_doc import gpu_list_doc

        catalog = self.catalog()
        try:
            found = filter_gpus(catalog, min_vram, arch, list(features))
        except UnknownName as error:  # a filter value, not a resource: 422
            raise AmbiguousFilter(error) from None
        return gpu_list_doc(found, catalog)

    def show_doc(self, name: str) -> dict[str, Any]:
        from whichgpu.render.json_doc import show_doc

        catalog = self.catalog()
        return show_doc(catalog.resolve(name), catalog, self.today())

    def comparison(self, names: Sequence[str], markets: Sequence[str] | None) -> Any:
        from whichgpu.comparison import compare, parse_markets

        return compare(self.catalog(), list(names), parse_markets(list(markets or [])))

    def compare_doc(self, names: Sequence[str], markets: Sequence[str] | None) -> dict[str, Any]:
        from whichgpu.render.json_doc import compare_doc

        return compare_doc(self.comparison(names, markets), self.catalog(), self.today())

    def fit_doc(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """``whichgpu fit`` with the body's fields for its options (same defaults)."""
        from whichgpu.fitting import fit_request
        from whichgpu.render.fit_out import fit_doc

        options = {k: v for k, v in body.items() if k not in ("model", "params", "config")}
        arch = model_arch(body.get("model"), body.get("params"), body.get("config"))
        return fit_doc(*fit_request(self.catalog(), arch, **options))

    def estimate_doc(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """``whichgpu estimate`` with the body's fields for its options (same defaults)."""
        from whichgpu.render.estimate_out import estimate_doc
        from whichgpu.throughput import estimate_job

        options = {k: v for k, v in body.items() if k not in ("model", "params", "config", "gpu")}
        task = options.get("task", "inference")
        arch = (
            None
            if task in ("render", "fp64")
            else model_arch(body.get("model"), body.get("params"), body.get("config"))
        )
        gpu = self.catalog().resolve(body.get("gpu", "a100"))
        return estimate_doc(estimate_job(gpu, arch, **options))

    def recommendation(
        self,
        workload: Workload,
        objective: str = "cost",
        catalog_name: str = "full",
        baseline: str | None = None,
    ) -> Recommendation:
        from whichgpu.recommender import recommend
        from whichgpu.recommender.spec import OBJECTIVES

        if objective not in OBJECTIVES:
            raise FieldError(
                "objective",
                fmt(
                    _("unknown objective {value!r}; valid: {valid}"),
                    value=objective,
                    valid=", ".join(OBJECTIVES),
                ),
            )
        catalog = self.catalog(catalog_name)
        base = catalog.resolve(baseline) if baseline else None
        return recommend(catalog, workload, objective, base, self.today())

    def mig_doc(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """``whichgpu mig``: services packed onto MIG GPUs, or (``profiles``) one mix checked."""
        from whichgpu.mig_planner import check_profiles, make_service, plan_mig
        from whichgpu.recommender.spec import DEFAULT_MARKETS, MARKETS, Where, parse_names

        catalog = self.catalog()
        gpu, profiles = body.get("gpu"), body.get("profiles")
        if profiles is not None:
            if gpu is None:
                raise FieldError("gpu", _("profiles need the gpu they are for"))
            if body.get("services"):
                raise FieldError("services", _("give services or profiles, not both"))
            target = catalog.resolve(gpu)
            names = [p.strip() for p in profiles if p.strip()]
            if not names:
                raise FieldError("profiles", _("name at least one MIG profile"))
            chosen, why = check_profiles(catalog, target, names)
            from whichgpu.render.mig_out import mig_check_doc

            return mig_check_doc(target.id, chosen, why)
        raws = body.get("services") or []
        if not raws:
            raise FieldError("services", _("give at least one service (or profiles and a gpu)"))
        services = [make_service(raw, i) for i, raw in enumerate(raws)]
        chosen_gpu = catalog.resolve(gpu) if gpu else None
        market = body.get("markets")
        markets = parse_names(",".join(market), MARKETS, Where(), ("market",)) if market else None
        from whichgpu.render.mig_out import mig_doc

        return mig_doc(plan_mig(catalog, services, chosen_gpu, markets or DEFAULT_MARKETS))


class AmbiguousFilter(InvalidInput):
    """An architecture filter that names no architecture (422 with the closest ones)."""

    def __init__(self, error: UnknownName) -> None:
        super().__init__(f"arch: {error.message()}")
        self.field = "arch"
        self.suggestions = error.suggestions


def model_arch(model: str | None, params: str | None, config: Any = None) -> ModelArch:
    """A preset, a generic size, or a config.json object (parsed as data: nothing runs)."""
    from whichgpu.models import arch_from_config_text, resolve_model

    if config is not None:
        if model is not None or params is not None:
            raise FieldError("config", _("give a model, params or a config, only one"))
        if not isinstance(config, dict):
            raise FieldError("config", _("must be the JSON object of a config.json"))
        return arch_from_config_text(json.dumps(config), "config.json")
    return resolve_model(model, params)


# -- forms ---------------------------------------------------------------------------------


def hours(text: str, field: str) -> float:
    """``48``, ``48h``, ``3d``, ``90min``, ``2w`` → hours (the CLI's durations)."""
    from whichgpu.units import parse_duration_h

    try:
        return parse_duration_h(text)
    except ValueError:
        raise FieldError(
            field, fmt(_("takes a duration like 48h, 3d or 90min (got {value!r})"), value=text)
        ) from None


def _int(text: str, field: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise FieldError(
            field, fmt(_("must be a whole number (got {value!r})"), value=text)
        ) from None


def _float(text: str, field: str) -> float:
    try:
        value = float(text.strip())
    except ValueError:
        raise FieldError(field, fmt(_("must be a number (got {value!r})"), value=text)) from None
    if not math.isfinite(value):
        raise FieldError(field, fmt(_("must be a finite number (got {value!r})"), value=text))
    return value


#: The recommend form's fields: component fields, then constraints, then how to rank.
FORM_INTS = ("batch", "seq", "prompt", "generate", "samples_per_frame", "services")
FORM_COUNTS = ("tokens", "images", "frames", "tflop")
FORM_FLOATS = ("epochs", "request_rate")
CONSTRAINT_FLOATS = ("budget_usd", "budget_usd_per_h", "electricity_usd_per_kwh", "hours_per_month")


@dataclass(frozen=True)
class RecommendForm:
    """The recommend form's request, validated into a workload."""

    workload: Workload
    objective: str
    catalog: str
    baseline: str | None
    config_note: str | None = None


def recommend_form(
    fields: Mapping[str, str],
    lists: Mapping[str, list[str]],
    config: str | None,
    config_name: str = "",
) -> RecommendForm:
    """A workload from the form's fields (strings) and an uploaded config.json's text."""
    from whichgpu.recommender.spec import Where, make_component, make_constraints
    from whichgpu.recommender.spec import Workload as Work

    def given(name: str) -> str | None:
        value = fields.get(name, "").strip()
        return value or None

    component: dict[str, Any] = {"kind": given("task") or "lora"}
    note = None
    if config is not None:
        from whichgpu.models import arch_from_config_text

        _config_object(config)
        arch = arch_from_config_text(config, config_name or "config.json")
        component["arch"] = arch  # parsed as data; its exact shape drives memory and speed
        note = fmt(
            _("config.json: {name}, {params:.2f} B parameters."),
            name=arch.name,
            params=arch.total_params / 1e9,
        )
    elif given("params"):
        component["params"] = given("params")
    elif given("model"):
        component["model"] = given("model")
    for name in ("precision", "quant"):
        if given(name):
            component[name] = given(name)
    for name in FORM_INTS:
        text = given(name)
        if text is not None:
            component[name] = _int(text, name)
    for name in FORM_COUNTS:
        if given(name):
            component[name] = given(name)
    for name in FORM_FLOATS:
        text = given(name)
        if text is not None:
            component[name] = _float(text, name)
    text = given("hours")
    if text is not None:
        component["hours"] = hours(text, "hours")
    if fields.get("checkpointing"):
        component["checkpointing"] = True
    constraints: dict[str, Any] = {}
    for name in CONSTRAINT_FLOATS:
        text = given(name)
        if text is not None:
            constraints[name] = _float(text, name)
    text = given("deadline")
    if text is not None:
        constraints["deadline_h"] = hours(text, "deadline")
    text = given("max_gpus")
    if text is not None:
        constraints["max_gpus"] = _int(text, "max_gpus")
    if given("mode"):
        constraints["mode"] = given("mode")
    for name in ("markets", "requires"):
        values = [v for v in lists.get(name, []) if v.strip()]
        if values:
            constraints[name] = values
    where = Where(_("form"))
    workload = Work(
        (make_component(component, where),),
        make_constraints(constraints, where),
        given("name") or "",
    )
    return RecommendForm(
        workload,
        given("objective") or "cost",
        given("catalog") or "full",
        given("baseline"),
        note,
    )


def _config_object(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise FieldError("config", fmt(_("not valid JSON ({reason})"), reason=error.msg)) from None


def run(language: str, compute: Callable[[], Any]) -> tuple[Any, Problem | None]:
    """``compute()`` in ``language``; a user error becomes a :class:`Problem`."""
    with speaking(language):
        try:
            return compute(), None
        except WhichGPUError as error:
            field = getattr(error, "field", None)
            if isinstance(error, AmbiguousFilter):
                return None, Problem(
                    422, "invalid_input", error.message(), "arch", tuple(error.suggestions)
                )
            return None, problem_of(error, field)


#: Paths whose bodies may carry an uploaded config.json.
UPLOAD_PATHS = ("/recommend",)


def too_large(path: str, limit: int) -> Problem:
    """The 413 answer: an upload's limit on the upload paths, the body limit elsewhere."""
    if path in UPLOAD_PATHS:
        message = _("the request is too large: an uploaded config.json may be {size} KiB")
        size = MAX_CONFIG_BYTES // 1024
    else:
        message = _("the request body is too large: at most {size} KiB")
        size = limit // 1024
    return Problem(413, "too_large", fmt(message, size=size))
