"""Reading and writing the user's files without trusting them: only regular files are read,
never more than a limit, and every file whichgpu writes appears whole or not at all.

:func:`read_regular` refuses a named pipe (which would block a read forever), a device
(``/dev/zero`` never ends), a directory or a socket in one line, before reading anything, and
reads at most its limit whatever ``st_size`` says (``/proc`` files say 0, a growing file says
less than it holds). :func:`write_atomic` writes a temporary file beside the target, syncs
it and renames it over the target: a failure leaves the old file as it was. Both raise one
:class:`~whichgpu.errors.InvalidInput` naming the path for any problem. Pure standard
library.
"""

from __future__ import annotations

import os
import stat
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

from whichgpu.errors import InvalidInput, Word
from whichgpu.i18n import N_

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

#: The size of one ``read``: large enough that a 32 MiB catalog takes few system calls,
#: small enough that a limit is overshot by little.
CHUNK_BYTES = 256 * 1024

#: What a file that is not a regular file is, by its type bits, as the error names it.
_KINDS = (
    (stat.S_ISFIFO, N_("a named pipe")),
    (stat.S_ISCHR, N_("a device")),
    (stat.S_ISBLK, N_("a device")),
    (stat.S_ISDIR, N_("a directory")),
    (stat.S_ISSOCK, N_("a socket")),
)


def file_kind(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` is, in words (a message id): "a named pipe"…;
    "" for a regular file."""
    if stat.S_ISREG(mode):
        return ""
    return next((kind for test, kind in _KINDS if test(mode)), N_("a special file"))


def _problem(
    code: str, path: str | os.PathLike[str], field: str | None, **params: object
) -> InvalidInput:
    """An :class:`InvalidInput` of ``code`` whose origin is the file ``path``."""
    problem = InvalidInput(code, field=field, **params)
    problem.origin = str(path)
    return problem


def _refuse_special(mode: int, path: str | os.PathLike[str], field: str | None) -> None:
    """Refuse a file of ``st_mode`` ``mode`` that is not a regular file, saying what it is."""
    kind = file_kind(mode)
    if kind:
        raise _problem("not_regular_file", path, field, kind=Word(kind))


def read_regular(path: str | os.PathLike[str], limit_bytes: int, field: str | None = None) -> bytes:
    """The bytes of the regular file at ``path`` (a symbolic link is followed), at most
    ``limit_bytes`` of them; anything else is one :class:`InvalidInput` naming the path
    (``origin``): not there or not permitted ("unreadable"), not a regular file, or larger
    than the limit.

    The type is checked before the file is opened (opening some devices has effects) and
    again on the open descriptor (the path may have been replaced in between); the open is
    non-blocking, so a named pipe never blocks it. The read stops one byte past the limit,
    whatever size the file claims."""
    try:
        _refuse_special(os.stat(path).st_mode, path, field)
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
        descriptor = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise _problem("unreadable", path, field, reason=error.strerror or str(error)) from None
    try:
        info = os.fstat(descriptor)
        _refuse_special(info.st_mode, path, field)
        if info.st_size > limit_bytes:  # refused at once; a smaller claim is not trusted
            raise _problem("file_too_large", path, field, size=info.st_size, limit=limit_bytes)
        chunks: list[bytes] = []
        total = 0
        while total <= limit_bytes:
            chunk = os.read(descriptor, min(CHUNK_BYTES, limit_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as error:
        raise _problem("unreadable", path, field, reason=error.strerror or str(error)) from None
    finally:
        os.close(descriptor)
    if total > limit_bytes:
        raise _problem("file_over_limit", path, field, limit=limit_bytes)
    return b"".join(chunks)


def decode_text(data: bytes, path: str | os.PathLike[str]) -> str:
    """A file's bytes as text: UTF-8, its line ends made ``\\n`` as a file opened as text
    reads them; other bytes are one :class:`InvalidInput` ("not_utf8") naming the file."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _problem("not_utf8", path, None) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_text(path: str | os.PathLike[str], limit_bytes: int, field: str | None = None) -> str:
    """The text of the regular file at ``path``: :func:`read_regular`, then
    :func:`decode_text`."""
    return decode_text(read_regular(path, limit_bytes, field), path)


def _new_file_mode() -> int:
    """The mode a file created the usual way gets: 0o666 less the umask (a temporary file is
    created 0o600). The umask is read from ``/proc/self/status`` where there is one: setting
    it to read it would change it for other threads for a moment."""
    with (
        suppress(OSError, ValueError, IndexError),
        open("/proc/self/status", encoding="ascii", errors="replace") as status,
    ):
        for line in status:
            if line.startswith("Umask:"):
                return 0o666 & ~int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def write_atomic(path: str | os.PathLike[str], data: bytes, field: str | None = None) -> None:
    """Write ``data`` to ``path`` whole or not at all: into a temporary file in the same
    directory, flushed and synced to disk, then renamed over ``path`` (the file is replaced,
    a symbolic link at ``path`` included, never written through). A file replaced keeps its
    permissions; a new one gets the umask's. On any failure the temporary file is removed and
    ``path`` is as it was; an :class:`OSError` is one :class:`InvalidInput` ("unwritable")
    naming ``path`` and ``field``."""
    target = Path(path)
    temporary: str | None = None
    try:
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            mode = _new_file_mode()
        import tempfile  # for writes only: a cold start that reads does without it

        descriptor, temporary = tempfile.mkstemp(
            prefix=f".{target.name}.", suffix=".tmp", dir=target.parent
        )
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
        temporary = None
        _sync_directory(target.parent)
    except OSError as error:
        reason = error.strerror or str(error)
        raise InvalidInput("unwritable", field=field, path=str(path), reason=reason) from None
    finally:
        if temporary is not None:
            with suppress(OSError):
                os.unlink(temporary)


def _sync_directory(directory: Path) -> None:
    """Sync a directory, so that a rename in it survives a crash; best effort (some systems
    and file systems refuse to open or sync a directory)."""
    with suppress(OSError):
        descriptor = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def shipped(package: str, *parts: str) -> Traversable:
    """A file or folder shipped inside ``package`` (the catalog's tables, the presets): its
    path beside the package's module, as an installed wheel or a checkout holds it;
    ``importlib.resources`` only where the package is no folder on disk (a zip), as its
    readers cost every cold start ~9 ms (they import ``zipfile``) to find a folder."""
    from importlib import import_module

    module_file = getattr(import_module(package), "__file__", None)
    if module_file is not None:
        path = Path(module_file).parent.joinpath(*parts)
        if path.exists():
            return path
    from importlib import resources

    return resources.files(package).joinpath(*parts)
