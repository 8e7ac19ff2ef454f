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

from whichgpu.i18n import _, fmt
from whichgpu.i18n.error_messages import MESSAGES

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
