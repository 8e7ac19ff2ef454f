"""Opt-in: fresh prices from SkyPilot's published price catalogs (``whichgpu prices update``).

SkyPilot's bot scrapes the providers' price APIs into one ``vms.csv`` per cloud in the
``skypilot-org/skypilot-catalog`` repository (``catalogs/v8/<cloud>/vms.csv``). ``update``
downloads the clouds asked for, each with a timeout and a size limit, checks that every file
imports (:func:`~whichgpu.catalog.userprices.parse_skypilot_vms`), and only then replaces the
snapshot in the user's cache, dated the day it was fetched: a failure changes nothing.
Every later command reads the snapshot (:func:`snapshot_prices`); its offers replace the
shipped ones of the same provider. Nothing here runs at import time or without the command.

The cache is not trusted: a cloud is a name from SkyPilot's list, never a path; each file is
read as a regular file within :data:`MAX_BYTES` and checked against the digest recorded when
it was fetched; a part that is missing, changed or unreadable is one warning and is left out
(its provider's shipped offers stay in use), and ``prices status`` says so.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from whichgpu.catalog.cache_paths import snapshot_dir
from whichgpu.catalog.records import Price, Source
from whichgpu.catalog.store import Catalog
from whichgpu.catalog.userprices import SKYPILOT_PROVIDERS, date_problem, parse_skypilot_vms
from whichgpu.errors import InvalidInput, Ref, WhichGPUError

#: Where SkyPilot publishes its catalogs: the raw files of the repository at a commit
#: (``{commit}``, each cloud's own: :func:`_version`), so that what is read is one version
#: with a date of its own. A URL without ``{commit}`` is read as it stands (a mirror, a
#: recorded copy), its offers dated the day they were read.
CATALOG_URL = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/{commit}/catalogs/v8"
#: Where a cloud's latest version is looked up: GitHub's REST API, "List commits" of the
#: cloud's ``vms.csv`` (docs.github.com/rest/commits/commits: each item's ``sha`` and
#: ``commit.committer.date``), the newest first.
VERSIONS_URL = (
    "https://api.github.com/repos/skypilot-org/skypilot-catalog/commits"
    "?path=catalogs/v8/{cloud}/vms.csv&per_page=1"
)
#: A commit as git names it: 40 hexadecimal digits.
COMMIT = re.compile(r"[0-9a-f]{40}")
#: The clouds fetched by default: GPU clouds and hyperscalers whose rows whichgpu reads.
DEFAULT_CLOUDS = ("lambda", "runpod", "vast", "nebius", "aws", "gcp")
TIMEOUT_S = 20
#: The largest file read (AWS's vms.csv is ~3.7 MB): a bound on memory and time.
MAX_BYTES = 32 * 1024 * 1024
#: The largest snapshot.json read: a date, a URL and a line per cloud (under 4 KB).
MAX_META_BYTES = 64 * 1024
SNAPSHOT_FILE = "snapshot.json"
#: A cloud as SkyPilot names its catalog directories: lowercase letters, digits, '-' and
#: '_' (at most 32): a name that is a directory of the cache and of the URL, never a path.
CLOUD_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")
#: The clouds ``update`` fetches: SkyPilot's catalog directories whichgpu knows.
KNOWN_CLOUDS = tuple(sorted(SKYPILOT_PROVIDERS))
#: A file's recorded SHA-256, as hexadecimal digits.
SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Version:
    """The version of a cloud's catalog read: its commit and the day it was committed (the
    day SkyPilot's bot wrote those prices: their date)."""

    commit: str
    committed: date


@dataclass(frozen=True)
class Snapshot:
    """A stored set of SkyPilot catalogs: when they were fetched, from where, per cloud the
    offers it held then, and (from this version on) each file's SHA-256 and the version
    read (where the source has versions)."""

    fetched: date
    url: str
    clouds: dict[str, int]
    path: Path
    digests: dict[str, str] | None = None
    versions: dict[str, Version] | None = None

    def dated(self, cloud: str) -> date:
        """The date ``cloud``'s offers carry: its version's, else the day it was read."""
        version = (self.versions or {}).get(cloud)
        return self.fetched if version is None else version.committed

    def file_url(self, cloud: str) -> str:
        """Where ``cloud``'s file was read: at its version's commit where it has one."""
        version = (self.versions or {}).get(cloud)
        root = self.url.replace("{commit}", version.commit) if version else self.url
        return f"{root.rstrip('/')}/{cloud}/vms.csv"


@dataclass(frozen=True)
class CloudRead:
    """One cloud of the snapshot as it reads now: its offers, or the one-line problem that
    leaves it out (missing, changed since fetched, not UTF-8, not a SkyPilot catalog)."""

    cloud: str
    recorded: int
    prices: tuple[Price, ...] = ()
    source: Source | None = None
    problem: str | None = None


@dataclass(frozen=True)
class SnapshotRead:
    """The snapshot as it reads now: None when there is none; the clouds read; and one
    warning per part left out (the whole snapshot when its snapshot.json is unreadable)."""

    snapshot: Snapshot | None
    clouds: tuple[CloudRead, ...] = ()
    warnings: tuple[InvalidInput, ...] = ()


def check_clouds(clouds: tuple[str, ...]) -> tuple[str, ...]:
    """``clouds`` if each is a cloud of :data:`KNOWN_CLOUDS`; else one
    :class:`InvalidInput` naming the first that is not, with the closest (a cloud is a
    directory of the cache: ``../x`` would write outside it)."""
    from whichgpu.catalog.names import closest

    for cloud in clouds:
        if cloud not in KNOWN_CLOUDS or not CLOUD_NAME.fullmatch(cloud):
            raise InvalidInput(
                "unknown_value",
                field=("cloud",),
                value=cloud,
                valid=", ".join(KNOWN_CLOUDS),
                hint=closest(cloud.lower(), KNOWN_CLOUDS) or "",
            )
    return clouds


def _fetch(url: str, timeout_s: float, limit: int = MAX_BYTES) -> bytes:
    """One file, or one :class:`InvalidInput` line (network, HTTP status, size). A
    ``file:`` URL is read as a regular file only (a named pipe would block urllib)."""
    from urllib.error import URLError
    from urllib.request import Request, urlopen

    if url.lower().startswith("file:"):
        from urllib.parse import urlparse
        from urllib.request import url2pathname

        from whichgpu.files import read_regular

        try:
            return read_regular(url2pathname(urlparse(url).path), limit)
        except InvalidInput as problem:
            raise InvalidInput("price_fetch", url=url, reason=problem.text()) from None
    try:
        with urlopen(Request(url, headers={"User-Agent": "whichgpu"}), timeout=timeout_s) as r:
            data: bytes = r.read(limit + 1)
    except (URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", None) or error
        raise InvalidInput("price_fetch", url=url, reason=str(reason)) from None
    if len(data) > limit:
        raise InvalidInput("price_fetch", url=url, reason=f"larger than {limit} bytes")
    return data


def _version(versions_url: str, cloud: str, timeout_s: float, today: date) -> Version:
    """``cloud``'s latest version: the newest commit of its file as GitHub's "List commits"
    returns it (``versions_url`` with ``{cloud}``), checked: a 40-digit commit and a
    committed day not after ``today``; else one :class:`InvalidInput` line."""
    url = versions_url.replace("{cloud}", cloud)
    try:
        items = json.loads(_fetch(url, timeout_s, MAX_META_BYTES))
        first = items[0]
        commit, stamp = first["sha"], first["commit"]["committer"]["date"]
        if not isinstance(commit, str) or not COMMIT.fullmatch(commit):
            raise ValueError(f"a commit named {str(commit)[:50]!r}")
        if not isinstance(stamp, str) or date_problem(stamp[:10], today) is not None:
            raise ValueError(f"a commit date of {str(stamp)[:30]!r}")
        return Version(commit, date.fromisoformat(stamp[:10]))
    except (ValueError, KeyError, IndexError, TypeError, RecursionError) as error:
        reason = f"not a list of commits ({str(error)[:80]})"
        raise InvalidInput("price_fetch", url=url, reason=reason) from None


def update(
    catalog: Catalog,
    clouds: tuple[str, ...] = DEFAULT_CLOUDS,
    url: str = CATALOG_URL,
    timeout_s: float = TIMEOUT_S,
    today: date | None = None,
    versions_url: str = VERSIONS_URL,
) -> Snapshot:
    """Fetch ``clouds``' catalogs from ``url``, check them, and store them as the snapshot
    (replacing the last one only once every file has been fetched and read). The clouds are
    checked (:func:`check_clouds`) before anything is fetched or written. Where ``url``
    names a ``{commit}``, each cloud is read at its latest version (:func:`_version`) and
    its offers carry that version's date; else the day it was read."""
    import shutil
    import tempfile

    from whichgpu.files import write_atomic

    check_clouds(clouds)
    fetched = today or date.today()
    target = snapshot_dir()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".prices-", dir=target.parent))
    except OSError as error:
        reason = error.strerror or str(error)
        raise InvalidInput("unwritable", path=str(target), reason=reason) from None
    try:
        counts: dict[str, int] = {}
        digests: dict[str, str] = {}
        versions: dict[str, Version] = {}
        for cloud in clouds:
            if "{commit}" in url:
                versions[cloud] = _version(versions_url, cloud, timeout_s, fetched)
            where = Snapshot(fetched, url, {}, staging, versions=versions)
            text = _fetch(where.file_url(cloud), timeout_s).decode("utf-8", errors="replace")
            path = staging / cloud / "vms.csv"
            found = parse_skypilot_vms(
                text, str(path), catalog, f"skypilot-{cloud}", where.dated(cloud)
            )
            counts[cloud] = len(found.prices)
            data = text.encode("utf-8")
            digests[cloud] = hashlib.sha256(data).hexdigest()
            path.parent.mkdir()
            write_atomic(path, data)
        meta = {"fetched": fetched.isoformat(), "url": url, "clouds": counts, "sha256": digests,
                "versions": {c: {"commit": v.commit, "committed": v.committed.isoformat()}
                             for c, v in versions.items()}}  # fmt: skip
        write_atomic(staging / SNAPSHOT_FILE, json.dumps(meta, indent=2).encode("utf-8"))
        old = target.with_name(".prices-old")
        try:
            if target.exists():
                shutil.rmtree(old, ignore_errors=True)
                target.rename(old)
            staging.rename(target)
        except OSError as error:
            reason = error.strerror or str(error)
            raise InvalidInput("unwritable", path=str(target), reason=reason) from None
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return Snapshot(fetched, url, counts, target, digests, versions)


def _versions(value: object, counts: dict[str, int], today: date) -> dict[str, Version]:
    """The recorded version of each cloud that has one: a commit (:data:`COMMIT`) and a
    committed day not after ``today``; a :class:`ValueError` otherwise."""
    if not isinstance(value, dict) or not set(value) <= set(counts):
        raise ValueError("versions: not one per cloud")
    out = {}
    for cloud, item in value.items():
        commit = item.get("commit") if isinstance(item, dict) else None
        day = item.get("committed") if isinstance(item, dict) else None
        if not isinstance(commit, str) or not COMMIT.fullmatch(commit):
            raise ValueError(f"versions: {cloud}'s commit")
        if not isinstance(day, str) or len(day) != 10 or date_problem(day, today) is not None:
            raise ValueError(f"versions: {cloud}'s committed date")
        out[cloud] = Version(commit, date.fromisoformat(day))
    return out


def _meta(data: object, today: date) -> tuple[date, str, dict[str, int], dict[str, str] | None]:
    """The fields of a snapshot.json document, checked: a real date not in the future, a
    URL, offer counts by cloud name (:data:`CLOUD_NAME`), digests if recorded (the versions:
    :func:`_versions`). A :class:`ValueError` says what is wrong."""
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    fetched_text, url, clouds = data.get("fetched"), data.get("url"), data.get("clouds")
    if not isinstance(fetched_text, str) or not isinstance(url, str):
        raise ValueError("no fetched date or URL")
    problem = date_problem(fetched_text, today)
    if problem is not None or len(fetched_text) != len("2026-11-29"):
        raise ValueError(f"fetched: {problem.text() if problem else fetched_text}")
    if not isinstance(clouds, dict) or not clouds:
        raise ValueError("no clouds")
    counts: dict[str, int] = {}
    for name, count in clouds.items():
        if not CLOUD_NAME.fullmatch(name):
            raise ValueError(f"a cloud named {name!r}")
        if not isinstance(count, int) or isinstance(count, bool) or not 0 <= count <= 10**6:
            raise ValueError(f"{name}: a count of {count!r}")
        counts[name] = count
    digests = data.get("sha256")
    if digests is not None and not _digests(digests, counts):
        raise ValueError("sha256: not a digest per cloud")
    return date.fromisoformat(fetched_text), url, counts, digests


def _digests(value: object, counts: dict[str, int]) -> bool:
    """Whether ``value`` is a SHA-256 (64 hex digits) for each cloud of ``counts``."""
    return (
        isinstance(value, dict)
        and set(value) == set(counts)
        and all(isinstance(v, str) and SHA256.fullmatch(v) for v in value.values())
    )


def _read_meta(today: date | None = None) -> tuple[Snapshot | None, InvalidInput | None]:
    """The snapshot's record and None; (None, None) when there is no snapshot (no prices
    folder); (None, the problem) when its snapshot.json is missing or corrupt (a date after
    ``today``, the clock's by default, is)."""
    from whichgpu.files import read_text

    folder = snapshot_dir()
    if not os.path.lexists(folder):
        return None, None
    meta_path = folder / SNAPSHOT_FILE
    now = today or date.today()
    try:
        data = json.loads(read_text(meta_path, MAX_META_BYTES))
        fetched, url, clouds, digests = _meta(data, now)
        versions = _versions(data.get("versions", {}), clouds, now)
    except InvalidInput as unreadable:
        return None, unreadable
    except (ValueError, RecursionError) as error:  # JSONDecodeError is a ValueError
        first_line = (str(error).splitlines() or [type(error).__name__])[0]
        problem = InvalidInput("snapshot_corrupt", reason=first_line[:200])
        problem.origin = str(meta_path)
        return None, problem
    return Snapshot(fetched, url, clouds, folder, digests, versions), None


def load_snapshot(today: date | None = None) -> Snapshot | None:
    """The stored snapshot's record, or None when there is none or it cannot be read
    (:func:`read_snapshot` says why)."""
    return _read_meta(today)[0]


def _source(snapshot: Snapshot, cloud: str, source_id: str) -> Source:
    """The source a cloud's snapshot offers cite: SkyPilot's file at its version, dated when
    committed (else when read, and said so)."""
    version = (snapshot.versions or {}).get(cloud)
    title = f"SkyPilot catalog {cloud}/vms.csv, fetched {snapshot.fetched.isoformat()}"
    if version is not None:
        title = (f"SkyPilot catalog {cloud}/vms.csv @{version.commit[:7]}, committed "
                 f"{version.committed.isoformat()}")  # fmt: skip
    return Source(
        id=source_id,
        title=title,
        publisher="SkyPilot (skypilot-org/skypilot-catalog)",
        url=snapshot.file_url(cloud),
        published=snapshot.dated(cloud).isoformat(),
        retrieved=snapshot.fetched,
        kind="price catalog",
    )


def _read_cloud(catalog: Catalog, snapshot: Snapshot, cloud: str) -> CloudRead:
    """One cloud's vms.csv of the snapshot: read as a regular file, checked against its
    recorded digest, decoded and parsed; any problem is the :class:`CloudRead`'s one line."""
    from whichgpu.files import decode_text, read_regular

    path = snapshot.path / cloud / "vms.csv"
    recorded = snapshot.clouds[cloud]
    try:
        data = read_regular(path, MAX_BYTES)
        expected = (snapshot.digests or {}).get(cloud)
        if expected is not None and hashlib.sha256(data).hexdigest() != expected:
            changed = InvalidInput("snapshot_changed")
            changed.origin = str(path)
            raise changed
        text = decode_text(data, path)
        source_id = f"skypilot-{cloud}-snapshot"
        found = parse_skypilot_vms(text, str(path), catalog, source_id, snapshot.dated(cloud))
    except WhichGPUError as error:
        return CloudRead(cloud, recorded, problem=error.message())
    source = _source(snapshot, cloud, found.source.id)
    return CloudRead(cloud, recorded, found.prices, source)


def read_snapshot(catalog: Catalog, today: date | None = None) -> SnapshotRead:
    """The snapshot as it reads now: each cloud's offers, and a warning for each part left
    out (the whole snapshot, or a cloud whose file is missing, changed or corrupt, or a
    record dated after ``today``, the clock's by default)."""
    snapshot, problem = _read_meta(today)
    update_action = Ref(("@prices-update",))
    if snapshot is None:
        if problem is None:
            return SnapshotRead(None)
        warning = InvalidInput("snapshot_ignored", problem=problem.message(), update=update_action)
        return SnapshotRead(None, warnings=(warning,))
    clouds = tuple(_read_cloud(catalog, snapshot, cloud) for cloud in snapshot.clouds)
    warnings = tuple(
        InvalidInput(
            "snapshot_cloud_ignored", problem=read.problem, cloud=read.cloud, update=update_action
        )
        for read in clouds
        if read.problem is not None
    )
    return SnapshotRead(snapshot, clouds, warnings)


def snapshot_prices(
    catalog: Catalog, today: date | None = None
) -> tuple[tuple[Price, ...], tuple[Source, ...], tuple[InvalidInput, ...]]:
    """The snapshot's offers, their sources, and a warning for each part left out (none
    without a snapshot; :func:`read_snapshot`)."""
    found = read_snapshot(catalog, today)
    prices = tuple(p for read in found.clouds for p in read.prices)
    sources = tuple(read.source for read in found.clouds if read.source is not None)
    return prices, sources, found.warnings
