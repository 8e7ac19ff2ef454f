"""Translation of user-facing text (gettext), loaded lazily.

Every string a user reads goes through :func:`_`. Catalogs (``locale/<lang>/LC_MESSAGES/
whichgpu.mo``) are looked up on the first call, never at import time. Until French and
Japanese catalogs ship, gettext falls back to the English source strings.
"""

from __future__ import annotations

import gettext
from functools import cache
from pathlib import Path

DOMAIN = "whichgpu"
LOCALE_DIR = Path(__file__).parent / "locale"

_language: str | None = None


def set_language(language: str | None) -> None:
    """Choose the language of messages (``None``: from ``LANGUAGE``/``LC_ALL``/``LANG``)."""
    global _language
    _language = language
    _translation.cache_clear()


@cache
def _translation() -> gettext.NullTranslations:
    languages = [_language] if _language else None
    return gettext.translation(DOMAIN, LOCALE_DIR, languages=languages, fallback=True)


def _(message: str) -> str:
    """Translate ``message`` into the current language."""
    return _translation().gettext(message)


def N_(message: str) -> str:
    """Mark ``message`` for extraction without translating it now (message tables)."""
    return message


def ngettext(singular: str, plural: str, n: int) -> str:
    """Translate a message whose form depends on the count ``n``."""
    return _translation().ngettext(singular, plural, n)
