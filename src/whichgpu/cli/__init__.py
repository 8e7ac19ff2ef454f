"""The ``whichgpu`` command: thin shells that parse input, call the library, render.

The app and its shared options are in :mod:`._app`; the commands, grouped by concern, in
:mod:`.catalog`, :mod:`.sizing` and :mod:`.plan` (imported here, in the order ``--help``
lists them).
"""

from __future__ import annotations

import copy
import errno
import os
import sys
from collections.abc import Callable
from contextlib import suppress
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING

import typer

from whichgpu.cli._app import app, split_language
from whichgpu.errors import InvalidInput, Path, UnknownName, WhichGPUError, naming_fields
from whichgpu.i18n import _, fmt, language_from_environment, set_language

if TYPE_CHECKING:
    from whichgpu.catalog.names import FamilyChoice

#: The module that registers each command (on import). A run imports its command's module
#: only (the planning modules' request types cost a 'gpus' run ~40 ms); --help, no command
#: or an unknown name import them all, in the order --help lists them. A test checks the
#: table against the modules.
COMMAND_MODULES = {
    **dict.fromkeys(("gpus", "show", "compare", "prices", "models"), "catalog"),
    **dict.fromkeys(("fit", "estimate"), "sizing"),
    **dict.fromkeys(("recommend", "mig", "export", "serve"), "plan"),
}
MODULES = ("catalog", "sizing", "plan")


def _named(args: list[str]) -> str | None:
    """The command ``args`` name (their first word that is not an option)."""
    return next((arg for arg in args if not arg.startswith("-")), None)


def register(args: list[str]) -> None:
    """Import the modules whose commands ``args`` may run."""
    name = _named(args)
    help_first = bool(args) and args[0] in ("--help", "-h")
    wanted = (COMMAND_MODULES[name],) if name in COMMAND_MODULES and not help_first else MODULES
    for module in wanted:
        import_module(f"whichgpu.cli.{module}")


__all__ = ["app", "main"]


@cache
def _namer() -> Callable[[Path], str]:
    from whichgpu.cli.options import flag_namer
    from whichgpu.inputs.requests import REQUEST_TYPES

    return flag_namer(*REQUEST_TYPES)


def _flag_of(path: Path) -> str:
    """Errors name a field by the flag that sets it."""
    return _namer()(path)


def _command_name(info: typer.models.CommandInfo) -> str | None:
    from typer.main import get_command_name

    return info.name or (info.callback and get_command_name(info.callback.__name__))


def _one_command(args: list[str]) -> typer.Typer:
    """The app with only the command ``args`` name. Typer turns every registered command
    into a Click command on each run (their signatures, options and help texts: a tenth of
    a cold start), and a run needs one; with no command, ``--help`` first or a name that is
    not a command, the whole app (its listing, Click's error naming the commands)."""
    name = _named(args)
    commands = [c for c in app.registered_commands if _command_name(c) == name]
    groups = [g for g in app.registered_groups if g.name == name]
    if not commands and not groups:
        return app
    one = copy.copy(app)
    one.registered_commands, one.registered_groups = commands, groups
    if one.registered_callback is None:
        one.callback()(lambda: None)  # a group still: 'whichgpu NAME …', not 'whichgpu …'
    return one


def _fail(message: str, code: int = 2) -> None:
    """Say ``message`` on stderr as one ``whichgpu: error:`` line (unless stderr cannot be
    written either) and exit with ``code``."""
    with suppress(OSError, ValueError):
        sys.stderr.write(f"whichgpu: {_('error')}: {message}\n")
        sys.stderr.flush()
    raise SystemExit(code)


#: The errors of a write that an output refuses: a full disk or device (``> /dev/full``), a
#: quota, a file size limit, an I/O error. Raised with no file name, they come from writing
#: an open stream: the answer on stdout (whichgpu's own files are written by
#: :func:`whichgpu.files.write_atomic`, which names them).
OUTPUT_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def _output_failed(error: OSError) -> bool:
    """Whether ``error`` is a write to stdout that failed (:data:`OUTPUT_ERRNOS`)."""
    return error.errno in OUTPUT_ERRNOS and error.filename is None


def _drop_output() -> None:
    """Point stdout at the null device: what is still buffered for an output that is closed
    (a pipe whose reader left: ``| head -1``) or full is dropped, with no second error when
    Python flushes it at exit. Nothing to do for a stdout that is no file (a test's)."""
    with suppress(OSError, ValueError, AttributeError):
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, sys.stdout.fileno())
        finally:
            os.close(null)


#: A flag that names another thing on another command: ``--engine`` is the serving engine
#: (estimate, recommend); fit's training runtime is ``--runtime``.
RENAMED = {"--engine": "--runtime"}


def _renamed(error: Exception) -> str | None:
    """For an unknown option this command spells otherwise (:data:`RENAMED`), the line that
    names its spelling here, instead of Click's closest match by letters."""
    import click

    if not isinstance(error, click.NoSuchOption) or error.ctx is None:
        return None
    instead = RENAMED.get(error.option_name)
    flags = {o for p in error.ctx.command.params for o in p.opts}
    if instead is None or instead not in flags:
        return None
    return fmt(
        _("no option {flag} on {command}: its training runtime is {instead} (torch, deepspeed "
          "or megatron); {flag} names a serving engine on estimate and recommend"),
        flag=error.option_name, command=error.ctx.info_name, instead=instead,
    )  # fmt: skip


def _say_family_choices(choices: list[FamilyChoice]) -> None:
    """One line on stderr for each family name read as one of its variants (``h100``: the
    H100 SXM, the variant most offers rent), naming the others."""
    from whichgpu.render.read_as import read_as_doc

    for said in read_as_doc(choices):
        typer.echo(f"whichgpu: {said['text']}", err=True)


def _hub_hint(error: WhichGPUError) -> str:
    """Where an unknown model's name is a Hub id (``org/name``) that no preset is: how the
    CLI reads its config.json (``--hub``, opt-in network) or a downloaded one (``-m PATH``)."""
    if not isinstance(error, UnknownName) or error.listing != "@models" or "/" not in error.name:
        return ""
    return fmt(_("; --hub {name} reads its config.json from the Hub, or -m PATH a downloaded copy"),
               name=error.name)  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app; bad input is one line on stderr and exit code 2."""
    language, args = split_language(sys.argv[1:] if argv is None else argv)
    if language is not None:
        from whichgpu.i18n import LANGUAGES, normalize_language

        if normalize_language(language) is None:
            _fail(
                fmt(
                    _("unknown language {value!r}; valid: {valid}"),
                    value=language,
                    valid=", ".join(LANGUAGES),
                )
            )
        set_language(language)
    else:  # the environment's, read once (every message and number asks for it)
        set_language(language_from_environment())
    register(args)
    from whichgpu.catalog.names import recording_family_choices

    with naming_fields(_flag_of), recording_family_choices() as read_as:
        try:
            result = _one_command(args)(args=args, prog_name="whichgpu", standalone_mode=False)
            if sys.stdout is not None:  # None: started with stdout closed (>&-)
                sys.stdout.flush()  # a buffered answer that cannot be written fails here
            _say_family_choices(read_as)
        except WhichGPUError as error:
            _fail(error.message() + _hub_hint(error))
        except (typer.Exit, typer.Abort) as error:
            raise SystemExit(getattr(error, "exit_code", 1)) from None
        except BrokenPipeError:  # the reader has gone (| head): nothing to say, to no one
            _drop_output()
            raise SystemExit(1) from None
        except OSError as error:
            if not _output_failed(error):
                raise
            _drop_output()
            reason = error.strerror or str(error)
            _fail(InvalidInput("stdout_failed", reason=reason).message())
        except Exception as error:
            # Click's usage errors (unknown option, missing argument) carry their exit code.
            exit_code = getattr(error, "exit_code", None)
            format_message = getattr(error, "format_message", None)
            if exit_code is None or format_message is None:
                raise
            hint = _("see 'whichgpu --help'")
            _fail(f"{_renamed(error) or format_message()} ({hint})", exit_code)
    if isinstance(result, int) and result:
        raise SystemExit(result)
