"""The Typer app, the options several commands share, and the helpers they use."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import click
import typer
import typer.core

from whichgpu.i18n import _, set_language


class HelpFormatter(click.HelpFormatter):
    """Click's formatter, wrapping an option's help at spaces only: a default such as
    ``on-demand,marketplace`` or ``whichgpu-job`` is never cut at its hyphen (Click's
    ``wrap_text`` keeps textwrap's ``break_on_hyphens``), nor ``[default: VALUE]`` at its
    space."""

    def write_dl(self, rows: Any, col_max: int = 30, col_spacing: int = 2) -> None:
        import textwrap

        from click.formatting import iter_rows, measure_table

        term_len = len  # the help is plain text: no ANSI codes to discount

        rows = list(rows)
        first_col = min(measure_table(rows)[0], col_max) + col_spacing
        width = max(self.width - first_col - 2, 10)
        for first, second in iter_rows(rows, 2):
            self.write(f"{'':>{self.current_indent}}{first}")
            if not second:
                self.write("\n")
                continue
            if term_len(first) <= first_col - col_spacing:
                self.write(" " * (first_col - term_len(first)))
            else:
                self.write("\n" + " " * (first_col + self.current_indent))
            # "[default: VALUE]" wraps as one word (a no-break space after the colon)
            second = second.replace("[default: ", "[default:\u00a0")
            lines = textwrap.wrap(second, width, break_on_hyphens=False, break_long_words=False)
            indent = " " * (first_col + self.current_indent)
            self.write("\n".join([lines[0], *(indent + line for line in lines[1:])]) + "\n")


click.Context.formatter_class = HelpFormatter


def _format_options(
    self: click.Command, ctx: click.Context, formatter: click.HelpFormatter
) -> None:
    """A command's options under their headings (each option's ``rich_help_panel``,
    :data:`whichgpu.cli.options.PANELS`), in the order they come; the command's own options
    under "Options". Typer draws the headings only in its Rich help, which whichgpu does
    not render."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for param in self.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is not None:
            title = getattr(param, "rich_help_panel", None) or _("Options")
            groups.setdefault(title, []).append(record)
    for title, records in groups.items():
        with formatter.section(title):
            formatter.write_dl(records)


typer.core.TyperCommand.format_options = _format_options  # type: ignore[method-assign]
# Typer escapes the brackets of "[default: …]" and "[required]" for Rich's HTML export
# whenever Rich is installed, even with rich_markup_mode=None (typer 0.19, core.py
# get_help_record): the plain help then reads "\\[required]". whichgpu renders no Rich help.
typer.core.HAS_RICH = False


def split_language(argv: list[str]) -> tuple[str | None, list[str]]:
    """``--lang fr`` (or ``--lang=fr``) anywhere on the command line, and the rest."""
    language, rest, i = None, [], 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--lang":
            language, i = (argv[i + 1] if i + 1 < len(argv) else ""), i + 2
            continue
        if arg.startswith("--lang="):
            language = arg.split("=", 1)[1]
        else:
            rest.append(arg)
        i += 1
    return language, rest


# Help texts are built when this module loads: pick the language first (--lang, then
# LANGUAGE / LC_ALL / LANG).
_argv_language = split_language(sys.argv[1:])[0]
if _argv_language:
    set_language(_argv_language)

app = typer.Typer(
    name="whichgpu",
    epilog=_("Add --lang en|fr|ja to any command (default: LANGUAGE, LC_ALL or LANG)."),
    help=_("Which GPU should I rent or buy for this job, how many, and what will it cost?"),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

JobName = Annotated[str, typer.Option("--name", help=_("Export: the job's name."))]
RunCommand = Annotated[
    str | None,
    typer.Option(
        "--run",
        help=_(
            "Export: the command to run (default: the serving engine's launch command for a "
            "served model, else train.py $WHICHGPU_LAUNCH_ARGS, under torchrun on several "
            "GPUs)."
        ),
    ),
]
Image = Annotated[
    str | None,
    typer.Option(
        "--image",
        help=_(
            "Export (kubernetes): container image (default: the serving engine's own image for "
            "a served model, else NVIDIA's PyTorch image)."
        ),
    ),
]
ModelName = Annotated[
    str | None,
    typer.Option("--model", "-m", help=_("A preset (llama-3.1-8b…) or a config.json path.")),
]
GenericSize = Annotated[
    str | None, typer.Option("--params", help=_("A generic transformer of this size: 7B."))
]
HubModel = Annotated[
    str | None,
    typer.Option("--hub", metavar="ORG/NAME", help=_("Fetch config.json from the Hub.")),
]
JsonFlag = Annotated[
    bool, typer.Option("--json", help=_("Print JSON (the schema is in docs/json.md)."))
]
PriceFiles = Annotated[
    list[Path] | None,
    typer.Option(
        "--prices",
        metavar="FILE",
        help=_("Your prices (CSV or TOML); they replace the catalog's for that GPU and market."),
    ),
]
SkypilotFiles = Annotated[
    list[Path] | None,
    typer.Option(
        "--skypilot-catalog",
        metavar="VMS_CSV",
        help=_("Import prices from a SkyPilot catalog vms.csv."),
    ),
]


def warn(line: str) -> None:
    """One warning line on stderr: ``whichgpu: warning: …`` (the command goes on)."""
    typer.echo(f"whichgpu: {_('warning')}: {line}", err=True)


def user_catalog(prices: list[Path] | None, skypilot: list[Path] | None) -> Any:
    """The catalog with the price snapshot and the user's prices (:mod:`whichgpu.catalog.userdata`);
    a part of the snapshot left out is a warning line, skipped accelerators a note."""
    from whichgpu.catalog import load_catalog
    from whichgpu.catalog.userdata import catalog_with_user_data

    catalog, skipped = catalog_with_user_data(
        load_catalog(), prices or [], skypilot or [], warn=warn
    )
    if skipped:
        message = _("note: skipped accelerators whichgpu does not carry: {names}")
        typer.echo(message.format(names=", ".join(skipped)), err=True)
    return catalog


def print_json(doc: object) -> None:
    """The document as indented UTF-8 JSON (msgspec encodes it ~10× faster than json), with
    the family names it read (``h100``) and as what, as the API's documents have them."""
    import msgspec

    from whichgpu.catalog.names import family_choices_said
    from whichgpu.render.read_as import read_as_doc

    said = family_choices_said()
    if said and isinstance(doc, dict):
        doc = {**doc, "read_as": read_as_doc(said)}

    text = msgspec.json.format(msgspec.json.encode(doc), indent=2).decode("utf-8")
    sys.stdout.write(text + "\n")


def emit(json_out: bool, doc: Callable[[], object], show: Callable[[Any], None]) -> None:
    """A command's answer: its JSON document with ``--json``, else the tables (Rich is
    imported only then)."""
    if json_out:
        print_json(doc())
        return
    from whichgpu.render.tables import make_console

    show(make_console())


def names_a_file(model: str) -> bool:
    """Whether ``--model`` names a config.json rather than a preset: a ``.json`` name or a
    file. A name the system refuses as a path (longer than a file name may be, a NUL) names
    none, and is read as a preset's name, which refuses it in one line."""
    if model.endswith(".json"):
        return True
    try:
        return Path(model).is_file()
    except (OSError, ValueError):
        return False


def model_arch(model: str | None, params: str | None, hub: str | None) -> Any:
    """A preset name, a config.json path, a Hub id (opt-in) or a generic size."""
    from whichgpu.models import arch_from_config_text, resolve_model

    if hub is not None:
        from whichgpu.models.hub import hub_arch

        return hub_arch(hub)
    if model is not None and names_a_file(model):
        from whichgpu.catalog.userdata import read_user_file

        return arch_from_config_text(read_user_file(Path(model)), model)
    return resolve_model(model, params)
