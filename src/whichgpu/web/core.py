"""The web's shell over the library: one catalog per app, the language of each request, and
memoised results.

Everything here is framework-free (no FastAPI, no Jinja2): the routes in :mod:`.app` and
:mod:`.api` call these functions, which call the library exactly as the CLI does, so the API
returns the same JSON as each command's ``--json``.

The language of messages is a context variable of :mod:`whichgpu.i18n`: each request
computes and renders in its own (:func:`speaking`), concurrently, with no lock.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any, Protocol

from whichgpu.errors import (
    AmbiguousName,
    InvalidInput,
    InvalidInputs,
    Path,
    UnknownName,
    WhichGPUError,
    api_name,
    dotted,
    naming_fields,
)
from whichgpu.i18n import _, fmt, speaking
from whichgpu.models import resolve_gpu

if TYPE_CHECKING:
    from whichgpu.catalog.store import Catalog
    from whichgpu.commands.recommend.rank import Recommendation
    from whichgpu.inputs.requests import Ranking, Workload
    from whichgpu.models.arch import ModelArch

LANGUAGES: dict[str, str] = {"en": "English", "fr": "Français", "ja": "日本語"}
DEFAULT_LANGUAGE = "en"
LANGUAGE_COOKIE = "whichgpu_lang"

#: Request bodies larger than this are refused with 413 (API and forms).
MAX_BODY_BYTES = 64 * 1024
#: An uploaded config.json may be this large (the recommend form's body gets this much more).
MAX_CONFIG_BYTES = 1024 * 1024


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


# -- errors --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    """A user error as the web reports it: an HTTP status and a JSON-able body."""

    status: int
    code: str
    message: str
    field: str | None = None
    closest: tuple[str, ...] = ()
    #: Each field at fault: its path, the message, and the message without the field's
    #: name (what a page shows at the field)
    fields: tuple[tuple[str, str, str], ...] = ()

    def doc(self) -> dict[str, Any]:
        error: dict[str, Any] = {
            "code": self.code,
            "message": self.message,
            "field": self.field,
            "closest": list(self.closest),
        }
        if len(self.fields) > 1:
            error["errors"] = [{"field": f, "message": m} for f, m, _text in self.fields]
        return {"error": error}


def problem_of(error: WhichGPUError) -> Problem:
    """404 for a name that matches nothing (with the closest matches), 422 otherwise, with
    the error's code and the dotted path of its field. Call it while :func:`speaking`: the
    message is rendered now."""
    path = getattr(error, "field", None)
    field = dotted(path) if path else None
    if isinstance(error, UnknownName):
        return Problem(404, "unknown_name", error.message(), field, tuple(error.suggestions))
    if isinstance(error, AmbiguousName):
        return Problem(422, "ambiguous_name", error.message(), field, tuple(error.matches))
    if isinstance(error, InvalidInput):
        each = error.errors if isinstance(error, InvalidInputs) else [error]
        fields = tuple((dotted(e.field), e.message(), e.text()) for e in each if e.field)
        return Problem(422, error.code, error.message(), field, fields=fields)
    return Problem(422, "invalid_data", error.message(), field)


def read_json(body: bytes) -> Any:
    """A request body as JSON data (never executed), within the limits on data from outside
    (:func:`whichgpu.untrusted.load_json`: depth, values, digits): bad or oversized JSON is
    an :class:`InvalidInput` naming the body, before anything else sees the value."""
    from whichgpu.untrusted import load_json

    return load_json(body, "body")


def body_object(data: Any) -> dict[str, Any]:
    """The body's JSON object, each of its fields (and each field of the tables and lists of
    tables it holds) given a value: ``null`` is refused where the schema has no null (every
    field: leave it out for its default), except inside a ``config`` (a config.json object,
    where null is a value)."""
    if not isinstance(data, dict):
        problem = InvalidInput("not_a_table")
        problem.origin = "body"
        raise problem
    stack: list[tuple[Path, Any]] = [((), data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                if item is None:
                    raise InvalidInput("null_value", field=(*path, key))
                if key != "config":
                    stack.append(((*path, key), item))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                if item is None:
                    raise InvalidInput("null_value", field=(*path, index))
                stack.append(((*path, index), item))
    return data


# -- memo ----------------------------------------------------------------------------------


#: The answers a server keeps, in bytes (a recommend page is ~1 MB with its charts): the
#: least recently used go first once over it; one answer over a quarter of it is not kept.
MEMO_BYTES = 64 * 1024 * 1024


class Memo:
    """A small thread-safe LRU of computed answers (bytes) keyed by their (canonical)
    inputs, bounded by entries and by bytes."""

    def __init__(self, size: int = 256, max_bytes: int = MEMO_BYTES) -> None:
        self.size = size
        self.max_bytes = max_bytes
        self.bytes = 0
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
        size = len(value) if isinstance(value, bytes | str) else 0
        if size > self.max_bytes // 4:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self.bytes -= len(old) if isinstance(old, bytes | str) else 0
            self._items[key] = value
            self.bytes += size
            while len(self._items) > self.size or self.bytes > self.max_bytes:
                _key, dropped = self._items.popitem(last=False)
                self.bytes -= len(dropped) if isinstance(dropped, bytes | str) else 0

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.bytes = 0


def memo_key(*parts: object) -> str:
    return json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)


def json_bytes(doc: Any) -> bytes:
    """UTF-8 JSON, compact; the same values as ``--json`` prints (which indents), a
    non-finite float (never valid JSON) as null. msgspec's encoder, in C: a full-catalog
    recommendation's 340 kB in 0.5 ms, where ``json.dumps`` took 4.4."""
    import msgspec

    return msgspec.json.encode(doc)


# -- the library, called as the CLI calls it -----------------------------------------------


class Service:
    """One app's catalog (the shipped one with the user's configured prices, loaded once),
    the article's restriction of it, and a memo of results."""

    def __init__(self, catalog: Catalog | None = None, pool: Pool | None = None) -> None:
        self._catalog = catalog
        self._article: Catalog | None = None
        self._load_lock = threading.Lock()
        self.memo = Memo()
        #: Worker processes that compute the API's answers (None: worker threads)
        self.pool = pool

    def catalog(self, name: str = "full") -> Catalog:
        with self._load_lock:
            if self._catalog is None:
                from whichgpu.catalog import load_catalog
                from whichgpu.catalog.userdata import catalog_with_user_data

                self._catalog, _skipped = catalog_with_user_data(load_catalog(), [], [])
            if name == "full":
                return self._catalog
            if name != "article":
                raise ValueError(name)  # checked by the request type (Ranking.catalog)
            if self._article is None:
                from whichgpu.article import ARTICLE_SOURCE, article_gpu_ids

                base = self._catalog
                self._article = base.restricted(article_gpu_ids(base), ARTICLE_SOURCE)
            return self._article

    @staticmethod
    def today() -> date:
        from whichgpu.catalog.userdata import today

        return today()

    # documents -------------------------------------------------------------------------
    def models_doc(
        self, family: str | None, min_params: float | None, max_params: float | None
    ) -> dict[str, Any]:
        from whichgpu.models.pipelines import list_pipelines
        from whichgpu.models.presets import check_family, list_models
        from whichgpu.render.json_doc import models_doc

        check_family(family)
        return models_doc(
            list_models(family, min_params, max_params),
            list_pipelines(family, min_params, max_params),
        )

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
        return show_doc(resolve_gpu(catalog, name), catalog, self.today())

    def comparison(self, names: Sequence[str], markets: Sequence[str] | None) -> Any:
        from whichgpu.commands.compare import compare, parse_markets

        return compare(self.catalog(), list(names), parse_markets(list(markets or [])))

    def compare_doc(self, names: Sequence[str], markets: Sequence[str] | None) -> dict[str, Any]:
        from whichgpu.render.json_doc import compare_doc

        return compare_doc(self.comparison(names, markets), self.catalog(), self.today())

    def fit_doc(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """``whichgpu fit``: the body is a :class:`~whichgpu.inputs.requests.FitRequest` (and an
        optional ``config``, a config.json object)."""
        from whichgpu.commands.fit import fit_request
        from whichgpu.inputs import parse
        from whichgpu.inputs.requests import FitRequest
        from whichgpu.render.fit_out import fit_doc

        fields = dict(body)
        config = fields.pop("config", None)
        request: FitRequest = parse(FitRequest, fields)
        from whichgpu.inputs.requests import IMAGE_KINDS

        if request.task in IMAGE_KINDS:
            from whichgpu.commands.fit import fit_image_request
            from whichgpu.render.fit_out import image_fit_doc

            return image_fit_doc(fit_image_request(self.catalog(), request))
        arch = model_arch(request.model, request.params, config)
        return fit_doc(*fit_request(self.catalog(), arch, request))

    def estimate_doc(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """``whichgpu estimate``: the body is an :class:`~whichgpu.inputs.requests.EstimateRequest`
        (and an optional ``config``)."""
        from whichgpu.commands.estimate import estimate_job
        from whichgpu.inputs import parse
        from whichgpu.inputs.requests import EstimateRequest
        from whichgpu.render.estimate_out import estimate_doc

        fields = dict(body)
        config = fields.pop("config", None)
        request: EstimateRequest = parse(EstimateRequest, fields)
        arch = model_arch(request.model, request.params, config) if request.uses_model else None
        return estimate_doc(estimate_job(resolve_gpu(self.catalog(), request.gpu), arch, request))

    def recommendation(self, workload: Workload, ranking: Ranking) -> Recommendation:
        from whichgpu.commands.recommend import recommend

        catalog = self.catalog(ranking.catalog)
        base = resolve_gpu(catalog, ranking.baseline) if ranking.baseline else None
        return recommend(catalog, workload, ranking.objective, base, self.today())

    def recommend_doc(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """``whichgpu recommend``: the body is a workload file's tables (``name``,
        ``constraints``, ``components``, a component may carry a ``config``) and the
        :class:`~whichgpu.inputs.requests.Ranking` fields."""
        from whichgpu.inputs import parse, take
        from whichgpu.inputs.requests import Ranking
        from whichgpu.inputs.workload_files import make_workload
        from whichgpu.render.recommend_out import recommend_doc

        fields = dict(body)
        taken = take(Ranking, fields, remove=True)
        ranking: Ranking = parse(Ranking, taken)
        items = fields.get("components")
        if isinstance(items, list):
            fields["components"] = [
                _with_arch(item, ("components", i)) for i, item in enumerate(items)
            ]
        return recommend_doc(self.recommendation(make_workload(fields, tuple(taken)), ranking))

    def mig_doc(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """``whichgpu mig``: ``services`` packed onto MIG GPUs, or ``profiles`` on ``gpu``
        checked; the rest are :class:`~whichgpu.inputs.mig_requests.MigOptions`."""
        from whichgpu.commands.mig import check_request, make_services, plan_mig
        from whichgpu.inputs import check_keys, parse, take
        from whichgpu.inputs.mig_requests import MigOptions

        catalog = self.catalog()
        check_keys(body, ["services", *take(MigOptions, {})])
        options: MigOptions = parse(MigOptions, take(MigOptions, dict(body)))
        if options.profiles is not None:
            if body.get("services"):
                raise InvalidInput("services_and_profiles", field=("services",))
            target, chosen, why = check_request(catalog, options)
            from whichgpu.render.mig_out import mig_check_doc

            return mig_check_doc(target.id, chosen, why)
        services = make_services(body.get("services"))
        chosen_gpu = resolve_gpu(catalog, options.gpu) if options.gpu else None
        from whichgpu.render.mig_out import mig_doc

        return mig_doc(plan_mig(catalog, services, chosen_gpu, options.markets), self.today())


def _with_arch(item: Any, path: tuple[str | int, ...]) -> Any:
    """A component whose ``config`` (a config.json object) is parsed into its model."""
    if not isinstance(item, Mapping) or "config" not in item:
        return item
    fields = dict(item)
    config = fields.pop("config")
    try:
        fields["arch"] = model_arch(fields.pop("model", None), fields.pop("params", None), config)
    except InvalidInput as error:
        if error.field is None or error.field[0] != path[0]:
            error.field = (*path, *(error.field or ("config",)))
        raise
    return fields


class AmbiguousFilter(WhichGPUError):
    """An architecture filter that names no architecture (422 with the closest ones)."""

    def __init__(self, error: UnknownName) -> None:
        super().__init__(error)
        self.error = error
        self.field = ("arch",)
        self.suggestions = error.suggestions

    def message(self) -> str:
        return f"arch: {self.error.message()}"


def model_arch(model: str | None, params: str | None, config: Any = None) -> ModelArch:
    """A preset, a generic size, or a config.json object (parsed as data: nothing runs)."""
    from whichgpu.models import resolve_model
    from whichgpu.models.hf import parse_config

    if config is not None:
        if model is not None or params is not None:
            raise InvalidInput("model_and_config", field=("config",))
        if not isinstance(config, dict):
            raise InvalidInput("config_not_object", field=("config",))
        return parse_config(config, "config.json", "config.json", "config.json")
    return resolve_model(model, params)


#: Seconds a request's computation may take before it is answered 503 (the work is
#: bounded by the request limits: the worst case under them is well below this).
COMPUTE_TIMEOUT_S = 10.0
#: Computations running at once, off the event loop (the rest wait their turn): a slow one
#: never holds the loop, and cheap requests (the GPU list) are answered meanwhile.
COMPUTE_THREADS = 4
_limiter: Any = None


async def run_off_loop(
    language: str,
    compute: Callable[[], Any],
    timeout_s: float | None = None,
    namer: Callable[[Path], str] = api_name,
) -> tuple[Any, Problem | None]:
    """:func:`run` in a worker thread, within ``timeout_s`` (:data:`COMPUTE_TIMEOUT_S`): the
    event loop goes on serving while it computes; past the limit the request is answered
    503, in one line."""
    import anyio
    from anyio import to_thread

    global _limiter
    if _limiter is None:
        _limiter = anyio.CapacityLimiter(COMPUTE_THREADS)
    limit = COMPUTE_TIMEOUT_S if timeout_s is None else timeout_s
    try:
        with anyio.fail_after(limit):
            result: tuple[Any, Problem | None] = await to_thread.run_sync(
                run, language, compute, namer, limiter=_limiter, abandon_on_cancel=True
            )
            return result
    except TimeoutError:
        return None, timeout_problem(language, limit)


def timeout_problem(language: str, seconds: float) -> Problem:
    """The 503 answer of a computation past its limit, in ``language``."""
    with speaking(language):
        message = fmt(
            _("the request took longer than {seconds:g} s to compute; ask for less"),
            seconds=seconds,
        )
    return Problem(503, "timeout", message)


def worker_died_problem(language: str) -> Problem:
    """The 500 answer of a computation whose worker process died (not a user error)."""
    with speaking(language):
        message = _("the computation's worker process died; try again")
    return Problem(500, "worker_died", message)


class Pool(Protocol):
    """Where a server computes its long answers and pages: its compute processes
    (:class:`whichgpu.web.pool.ComputePool`)."""

    async def call(
        self, language: str, method: str, args: tuple[Any, ...], timeout_s: float
    ) -> tuple[bytes | None, Problem | None]: ...

    async def view(
        self, language: str, name: str, args: tuple[Any, ...], timeout_s: float
    ) -> tuple[tuple[int, str] | None, Problem | None]: ...


def run(
    language: str, compute: Callable[[], Any], namer: Callable[[Path], str] = api_name
) -> tuple[Any, Problem | None]:
    """``compute()`` in ``language``; a user error becomes a :class:`Problem`, naming fields
    with ``namer``: by their JSON paths (``components.0.tokens``) in the API, by their labels
    on the pages (:func:`whichgpu.web.labels.page_field_name`), also when ``whichgpu serve``
    started the server inside the CLI's flag naming."""
    with speaking(language), naming_fields(namer):
        try:
            return compute(), None
        except AmbiguousFilter as error:
            return None, Problem(
                422, "unknown_value", error.message(), "arch", tuple(error.suggestions)
            )
        except WhichGPUError as error:
            return None, problem_of(error)


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
