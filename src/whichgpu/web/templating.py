"""Jinja2 templates, autoescaped, with whichgpu's gettext installed (``{{ _("…") }}`` and
``{% trans %}``), rendered in the request's language by :func:`whichgpu.web.core.speaking`."""

from __future__ import annotations

from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from whichgpu.fields import format_cost, format_duration, format_rate
from whichgpu.i18n import _, fmt, format_decimal, ngettext
from whichgpu.notes import localize


def _gettext(message: str) -> str:
    return _(message)


def _ngettext(singular: str, plural: str, n: int) -> str:
    return ngettext(singular, plural, n)


usd = format_cost
rate = format_rate


def number(value: float | None, digits: int = 2) -> str:
    if value is None:
        return "—"
    return format_decimal(value, digits)


@cache
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("whichgpu.web", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        extensions=["jinja2.ext.i18n"],
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.install_gettext_callables(  # type: ignore[attr-defined]
        _gettext, _ngettext, newstyle=True
    )
    env.filters.update(
        usd=usd, rate=rate, number=number, duration=format_duration, localize=localize, fmt=fmt
    )
    return env


def render(name: str, **context: Any) -> str:
    """Render template ``name`` (call while speaking the request's language)."""
    return environment().get_template(name).render(**context)
