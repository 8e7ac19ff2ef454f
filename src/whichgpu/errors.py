"""One exception tree for everything a user can get wrong.

Each error renders as one line (:meth:`WhichGPUError.message`): what is wrong, what is
valid, and the closest match. The CLI prints it and exits with code 2; the HTTP API maps it
to a 4xx response. Nothing here is raised for a bug in whichgpu itself.
"""

from __future__ import annotations

from whichgpu.i18n import _, fmt


class WhichGPUError(Exception):
    """Base class: bad input from a user, a user file or a catalog file. ``str()`` of any of
    them is its one-line message, in the current language."""

    def message(self) -> str:
        return super().__str__()

    def __str__(self) -> str:
        return self.message()


class UnknownName(WhichGPUError):
    """A GPU (or other catalog) name that matches nothing."""

    def __init__(self, kind: str, name: str, suggestions: tuple[str, ...]) -> None:
        super().__init__(kind, name, suggestions)
        self.kind = kind
        self.name = name
        self.suggestions = suggestions

    def message(self) -> str:
        if self.suggestions:
            return fmt(
                _("unknown {kind} {name!r}; closest matches: {matches}"),
                kind=self.kind,
                name=self.name,
                matches=", ".join(self.suggestions),
            )
        return fmt(
            _("unknown {kind} {name!r}; run 'whichgpu gpus' to list them"),
            kind=self.kind,
            name=self.name,
        )


class AmbiguousName(WhichGPUError):
    """A name that matches more than one catalog entry."""

    def __init__(self, kind: str, name: str, matches: tuple[str, ...]) -> None:
        super().__init__(kind, name, matches)
        self.kind = kind
        self.name = name
        self.matches = matches

    def message(self) -> str:
        return fmt(
            _("ambiguous {kind} {name!r}: it matches {matches}; name one of them"),
            kind=self.kind,
            name=self.name,
            matches=", ".join(self.matches),
        )


class InvalidInput(WhichGPUError):
    """A value out of range or of the wrong kind, with what would be valid."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def message(self) -> str:
        return self.text


class CatalogError(WhichGPUError):
    """A data file (shipped or the user's) that does not validate, naming its file and row."""

    def __init__(self, path: str, row: int | None, problem: str) -> None:
        super().__init__(path, row, problem)
        self.path = path
        self.row = row
        self.problem = problem

    def message(self) -> str:
        if self.row is None:
            return fmt(_("{path}: {problem}"), path=self.path, problem=self.problem)
        return fmt(
            _("{path}, row {row}: {problem}"), path=self.path, row=self.row, problem=self.problem
        )
