"""Message catalogs: extract the messages, update the French and Japanese catalogs, compile.

python scripts/i18n.py extract   # src/whichgpu/i18n/locale/whichgpu.pot from the sources
python scripts/i18n.py update    # merge the template into locale/fr.po and locale/ja.po
python scripts/i18n.py compile   # locale/<lang>/LC_MESSAGES/whichgpu.mo (the build does this)
python scripts/i18n.py check     # exit 1 if the template is stale or a translation is missing

Everything goes through Babel (babel.messages): Python sources with the keywords ``_``,
``N_``, ``ngettext`` and ``Np_``, and Jinja2 templates of the web app.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "whichgpu"
LOCALE = PACKAGE / "i18n" / "locale"
TEMPLATE = LOCALE / "whichgpu.pot"
LANGUAGES = ("fr", "ja")
KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2), "Np_": (1, 2), "gettext": None}


def extract() -> object:
    """The catalog of every message in the sources, sorted, without line numbers (so the
    template changes only when messages do)."""
    from babel.messages.catalog import Catalog
    from babel.messages.extract import extract_from_dir

    catalog = Catalog(project="whichgpu", version="0.1", charset="utf-8")
    method_map = [("**.py", "python"), ("**/templates/**.html", "jinja2")]
    options = {"**/templates/**.html": {"extensions": "jinja2.ext.i18n"}}
    for filename, _lineno, message, comments, context in extract_from_dir(
        str(PACKAGE), method_map=method_map, options_map=options, keywords=KEYWORDS
    ):
        catalog.add(message, locations=[(f"src/whichgpu/{filename}", 0)],
                    auto_comments=comments, context=context)  # fmt: skip
    return catalog


def _write(catalog: object, path: Path) -> bytes:
    import io

    from babel.messages.pofile import write_po

    buffer = io.BytesIO()
    write_po(buffer, catalog, omit_header=True, sort_output=True, no_location=True, width=100)  # type: ignore[arg-type]
    data = buffer.getvalue()
    path.write_bytes(data)
    return data


def _read(path: Path, locale: str | None = None) -> object:
    from babel.messages.pofile import read_po

    with path.open("rb") as handle:
        return read_po(handle, locale=locale)


def update() -> None:
    template = extract()
    _write(template, TEMPLATE)
    for language in LANGUAGES:
        path = LOCALE / f"{language}.po"
        if path.exists():
            catalog = _read(path, language)
            catalog.update(template, no_fuzzy_matching=True)  # type: ignore[attr-defined]
        else:
            from babel.messages.catalog import Catalog

            catalog = Catalog(locale=language, project="whichgpu")
            catalog.update(template)
        _write(catalog, path)
        print(f"updated {path}")


def compile_catalogs(locale_dir: Path = LOCALE) -> list[Path]:
    """Compile each ``<lang>.po`` to ``<lang>/LC_MESSAGES/whichgpu.mo`` (fuzzy entries
    skipped, as gettext would)."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    written = []
    for po in sorted(locale_dir.glob("*.po")):
        with po.open("rb") as handle:
            catalog = read_po(handle, locale=po.stem)
        target = locale_dir / po.stem / "LC_MESSAGES" / "whichgpu.mo"
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("wb") as handle:
            write_mo(handle, catalog)
        written.append(target)
    return written


def check() -> int:
    import io

    from babel.messages.pofile import write_po

    problems = []
    buffer = io.BytesIO()
    write_po(buffer, extract(), omit_header=True, sort_output=True, no_location=True, width=100)  # type: ignore[arg-type]
    if not TEMPLATE.exists() or TEMPLATE.read_bytes() != buffer.getvalue():
        problems.append("the message template is stale: run 'python scripts/i18n.py update'")
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    return 0


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "check"
    if command == "extract":
        _write(extract(), TEMPLATE)
    elif command == "update":
        update()
    elif command == "compile":
        for path in compile_catalogs():
            print(f"wrote {path}")
    elif command == "check":
        return check()
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
