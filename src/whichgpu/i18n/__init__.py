"""Translation of user-facing text (gettext) and locale-aware numbers (Babel), both lazy.

Every string a user reads goes through :func:`_`; messages with parameters are filled by
:func:`fmt`, which formats numbers as the language writes them (``1 234,56`` in French) from
the same ``{cost:,.2f}`` placeholders the English source uses. Catalogs
(``locale/<lang>/LC_MESSAGES/whichgpu.mo``, compiled from ``locale/<lang>.po`` when the
package is built) and Babel's locale data are loaded on first use, never at import time.

The language is a context variable: the CLI sets it once (:func:`set_language`), and each
web request computes and renders in its own (:func:`speaking`), on any thread, with no lock.
"""

from __future__ import annotations

import gettext
import os
import re
import string
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

DOMAIN = "whichgpu"
LOCALE_DIR = Path(__file__).parent / "locale"
#: The languages whichgpu ships, English (the source) first.
LANGUAGES = ("en", "fr", "ja")

#: The language asked for in this context (None: the environment's).
_language: ContextVar[str | None] = ContextVar("whichgpu_language", default=None)


def normalize_language(value: str | None) -> str | None:
    """``fr_FR.UTF-8`` → ``fr``; ``ja-JP`` → ``ja``; unsupported or empty → None."""
    if not value:
        return None
    code = re.split(r"[_.@-]", value.strip().lower(), maxsplit=1)[0]
    return code if code in LANGUAGES else None


#: The variables gettext reads the language from, in its order.
_LANGUAGE_VARIABLES = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")


def language_from_environment() -> str:
    """The first supported language of ``LANGUAGE`` (a ``:`` list), ``LC_ALL``,
    ``LC_MESSAGES`` or ``LANG``, as gettext reads them; English otherwise."""
    return _language_of(tuple(map(os.environ.get, _LANGUAGE_VARIABLES)))


@cache
def _language_of(values: tuple[str | None, ...]) -> str:
    """:func:`language_from_environment` of the variables' values (parsed once per set of
    values: every translated string asks)."""
    for value in values:
        for item in (value or "").split(":"):
            found = normalize_language(item)
            if found:
                return found
        if value:
            break  # gettext stops at the first variable that is set
    return "en"


def set_language(language: str | None) -> None:
    """Choose the language of messages and numbers in this context (``None``: from the
    environment)."""
    _language.set(normalize_language(language) if language else None)


@contextmanager
def speaking(language: str | None) -> Iterator[None]:
    """Messages and numbers in ``language`` inside the block, in this context only."""
    token = _language.set(normalize_language(language) if language else None)
    try:
        yield
    finally:
        _language.reset(token)


def current_language() -> str:
    return _language.get() or language_from_environment()


@cache
def _catalog(language: str) -> gettext.NullTranslations:
    if language == "en":
        return gettext.NullTranslations()
    return gettext.translation(DOMAIN, LOCALE_DIR, languages=[language], fallback=True)


def _translation() -> gettext.NullTranslations:
    return _catalog(current_language())


def _(message: str) -> str:
    """Translate ``message`` into the current language."""
    return _translation().gettext(message)


def N_(message: str) -> str:
    """Mark ``message`` for extraction without translating it now (message tables)."""
    return message


def ngettext(singular: str, plural: str, n: int) -> str:
    """Translate a message whose form depends on the count ``n``."""
    return _translation().ngettext(singular, plural, n)


class Plural(NamedTuple):
    """A message table's entry whose form depends on one of its parameters, ``counted``."""

    singular: str
    plural: str
    counted: str

    def form(self, n: int, translate: bool = True) -> str:
        """The form for ``n`` in the current language, or the English source's."""
        if translate:
            return ngettext(self.singular, self.plural, n)
        return self.singular if n == 1 else self.plural


def Np_(singular: str, plural: str, counted: str) -> Plural:
    """Mark a plural message for extraction without translating it now (message tables):
    its form follows the parameter ``counted``."""
    return Plural(singular, plural, counted)


# -- numbers ------------------------------------------------------------------------------

_SPEC = re.compile(r"^(?P<group>,?)(?:\.(?P<decimals>\d+))?(?P<kind>[f%d]?)$")


def half_up(value: float, decimals: int) -> Decimal:
    """``value`` rounded as a person rounds what they read: half away from zero, on its
    shortest decimal form (0.175 → 0.18 in every language; the float 0.175 is a hair under
    it, which Python's own formatting rounds down and Babel's up). Wide enough for any
    float: the default context's 28 digits cannot hold 1e25 to three decimals, and an error
    message echoing such a value must not fail."""
    from decimal import ROUND_HALF_UP, Context

    exact = Decimal(repr(float(value)))
    return exact.quantize(Decimal(1).scaleb(-decimals), ROUND_HALF_UP, Context(prec=400))


def format_decimal(value: float, decimals: int | None = None, grouping: bool = True) -> str:
    """A number as the current language writes it: ``1,234.56`` (en), ``1 234,56`` (fr);
    ``decimals=None`` keeps up to three significant decimals."""
    language = current_language()
    if decimals is not None:
        value = half_up(value, decimals)  # type: ignore[assignment]
    elif isinstance(value, float):  # up to three decimals, as Babel's "#,##0.###" below
        value = half_up(value, 3).normalize()  # type: ignore[assignment]
    if language == "en":
        if decimals is None:
            spec = "f" if isinstance(value, Decimal) else ""
            return f"{value:,{spec}}" if grouping else f"{value:{spec}}"
        return f"{value:,.{decimals}f}" if grouping else f"{value:.{decimals}f}"
    from babel.numbers import format_decimal as babel_decimal

    integer = "#,##0" if grouping else "0"
    pattern = (
        integer + ("." + "0" * decimals if decimals else "")
        if decimals is not None
        else integer + ".###"
    )
    return str(babel_decimal(value, format=pattern, locale=language, decimal_quantization=True))


def format_percent(value: float, decimals: int = 0) -> str:
    """A fraction as a percentage, rounded as :func:`half_up` rounds (0.125 → 13 %)."""
    from decimal import ROUND_HALF_UP

    percent = (Decimal(repr(float(value))) * 100).quantize(
        Decimal(1).scaleb(-decimals), ROUND_HALF_UP
    )
    language = current_language()
    if language == "en":
        return f"{percent:.{decimals}f}%"
    from babel import Locale
    from babel.numbers import format_percent as babel_percent

    # the language's own pattern (``#,##0 %`` in French), with the decimals asked for
    pattern = Locale.parse(language).percent_formats[None].pattern
    if decimals:
        pattern = pattern.replace("0", "0." + "0" * decimals, 1)
    return str(babel_percent(percent / 100, format=pattern, locale=language))


#: The longest echo of a value in a message (``{value!r}``): a user's 10,000-character
#: GPU name comes back as its head and tail.
MAX_ECHO_CHARS = 80


def short_repr(value: object) -> str:
    """``repr(value)`` within :data:`MAX_ECHO_CHARS`: a long string as its head, ``…`` and
    its tail; a container a few items and levels deep (:mod:`reprlib`, which never expands
    the whole of a nested value: a YAML alias bomb stays a few lines of work)."""
    import reprlib

    shortener = reprlib.Repr()
    shortener.maxlevel, shortener.maxdict, shortener.maxlist, shortener.maxtuple = 3, 4, 6, 6
    shortener.maxstring = shortener.maxother = shortener.maxlong = MAX_ECHO_CHARS
    try:
        text = shortener.repr(value)
    except ValueError:  # an integer past Python's 4,300-digit conversion limit
        text = f"<an integer of {value.bit_length() if isinstance(value, int) else '?'} bits>"
    if len(text) <= MAX_ECHO_CHARS:
        return text
    return text[: MAX_ECHO_CHARS - 21] + "…" + text[-20:]


class _LocalFormatter(string.Formatter):
    """``str.format`` with numbers written the current language's way: the placeholder's
    spec (``,.2f``, ``.1f``, ``.0%``, ``,``) sets decimals and grouping, Babel the symbols;
    an echoed value (``!r``) shortened to :data:`MAX_ECHO_CHARS` (:func:`short_repr`)."""

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        if conversion == "r":
            return short_repr(value)
        return super().convert_field(value, conversion)

    def format_field(self, value: Any, format_spec: str) -> str:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return str(super().format_field(value, format_spec))
        match = _SPEC.match(format_spec)
        if match is None:
            return str(super().format_field(value, format_spec))
        decimals = match.group("decimals")
        places = int(decimals) if decimals is not None else None
        if match.group("kind") == "%":
            return format_percent(float(value), places or 0)
        if match.group("kind") == "d" or (isinstance(value, int) and places is None):
            return format_decimal(
                value,
                0 if isinstance(value, float) else None,
                bool(match.group("group")) or not format_spec,
            )
        return format_decimal(float(value), places, bool(match.group("group")))


_FORMATTER = _LocalFormatter()


def fmt(template: str, /, **params: Any) -> str:
    """Fill a (translated) template, numbers in the current language's notation and all
    rounded by one rule (:func:`half_up`: $0.175 reads $0.18 in every language)."""
    return _FORMATTER.format(template, **params)


def placeholders(template: str) -> list[tuple[str, str]]:
    """The ``(name, spec)`` of each placeholder, for checking that a translation keeps them."""
    return sorted(
        (name, spec or "")
        for _text, name, spec, _conversion in string.Formatter().parse(template)
        if name is not None
    )
