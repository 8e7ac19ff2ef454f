"""MIG planning: pack services onto MIG instances of as few GPUs as possible, under NVIDIA's
placement rules (NVIDIA Multi-Instance GPU user guide, "Supported MIG Profiles" and the
placements ``nvidia-smi mig -lgipp`` lists; ``catalog/data/mig_profiles.csv``):

* a GPU has 7 compute slices and 8 memory slices;
* an instance of a profile covers ``memory_slices`` consecutive memory slots starting on one
  of the profile's allowed start slots (``1g.10gb``: 0–6; ``2g.20gb``: 0, 2, 4; ``3g.40gb``:
  0, 4; ``4g.40gb`` and ``7g.80gb``: 0), and instances never overlap;
* the instances' compute slices add up to at most 7, and a profile has at most
  ``max_instances`` instances on one GPU (``1g.10gb+me``: one).

Each service takes the smallest profile that holds its memory (and its share of compute, when
it asks for one); instances are packed largest first, each GPU filled before the next is
opened, with an exact search of start slots per GPU (at most 7 instances: a few hundred
placements to try). Pure functions; the plan is checked by :func:`check_gpu` before it is
returned.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from whichgpu.catalog.records import MIG_COMPUTE_SLICES, MIG_MEMORY_SLICES, MigProfile
from whichgpu.notes import Note, note


@dataclass(frozen=True)
class Service:
    """Something to place: ``replicas`` isolated copies, each needing ``memory_gib`` and at
    least ``compute_slices`` of the 7 (1 by default)."""

    name: str
    memory_gib: float
    replicas: int = 1
    compute_slices: int = 1


@dataclass(frozen=True)
class Instance:
    service: str
    profile: MigProfile
    start: int

    @property
    def slots(self) -> range:
        return range(self.start, self.start + self.profile.memory_slices)


@dataclass(frozen=True)
class GpuPlan:
    index: int
    instances: tuple[Instance, ...]

    @property
    def compute_used(self) -> int:
        return sum(i.profile.compute_slices for i in self.instances)

    @property
    def memory_used(self) -> int:
        return sum(i.profile.memory_slices for i in self.instances)


@dataclass(frozen=True)
class MigPlan:
    gpu_id: str
    gpus: tuple[GpuPlan, ...]
    unplaced: tuple[tuple[str, Note], ...]
    #: GiB asked for by the placed services against GiB of the instances they got.
    needed_gib: float
    allotted_gib: float

    @property
    def waste_gib(self) -> float:
        return self.allotted_gib - self.needed_gib


def choose_profile(service: Service, profiles: Sequence[MigProfile]) -> MigProfile | None:
    """The smallest profile (memory, then compute) that holds the service; media-extension
    profiles are left for services that ask for them by name."""
    fitting = [
        p
        for p in profiles
        if not p.media_extensions
        and p.memory_gib >= service.memory_gib
        and p.compute_slices >= service.compute_slices
    ]
    if not fitting:
        return None
    return min(fitting, key=lambda p: (p.memory_slices, p.compute_slices, p.memory_gb, p.profile))


def check_gpu(instances: Sequence[Instance]) -> Note | None:
    """Why ``instances`` cannot share one GPU, or None when the placement is valid."""
    used: set[int] = set()
    counts: dict[str, int] = {}
    for inst in instances:
        p = inst.profile
        if inst.start not in p.start_slots:
            return note(
                "mig_bad_start",
                profile=p.profile,
                start=inst.start,
                starts=p.placements.replace(";", ", "),
            )
        if inst.start + p.memory_slices > p.gpu_memory_slices:
            return note(
                "mig_bad_start",
                profile=p.profile,
                start=inst.start,
                starts=p.placements.replace(";", ", "),
            )
        overlap = used & set(inst.slots)
        if overlap:
            return note("mig_overlap", profile=p.profile, slot=min(overlap))
        used |= set(inst.slots)
        counts[p.profile] = counts.get(p.profile, 0) + 1
        if counts[p.profile] > p.max_instances:
            return note("mig_too_many", profile=p.profile, limit=p.max_instances)
    compute = sum(i.profile.compute_slices for i in instances)
    limit = instances[0].profile.gpu_compute_slices if instances else MIG_COMPUTE_SLICES
    if compute > limit:
        return note("mig_compute", compute=compute, limit=limit)
    return None


def _place(items: Sequence[tuple[str, MigProfile]]) -> tuple[Instance, ...] | None:
    """A valid placement of all ``items`` on one GPU (exact search over start slots), or
    None. Larger instances go first: they have the fewest allowed starts."""
    order = sorted(items, key=lambda it: (-it[1].memory_slices, -it[1].compute_slices, it[0]))
    if not order:
        return ()
    geometry = order[0][1]
    if sum(p.compute_slices for _, p in order) > geometry.gpu_compute_slices:
        return None
    if sum(p.memory_slices for _, p in order) > geometry.gpu_memory_slices:
        return None
    placed: list[Instance] = []

    def search(i: int, used: frozenset[int]) -> bool:
        if i == len(order):
            return True
        name, profile = order[i]
        for start in profile.start_slots:
            slots = frozenset(range(start, start + profile.memory_slices))
            if slots & used:
                continue
            candidate = Instance(name, profile, start)
            if check_gpu([*placed, candidate]) is not None:
                continue
            placed.append(candidate)
            if search(i + 1, used | slots):
                return True
            placed.pop()
        return False

    return tuple(sorted(placed, key=lambda inst: inst.start)) if search(0, frozenset()) else None


def pack(
    gpu_id: str,
    profiles: Sequence[MigProfile],
    services: Sequence[Service],
    explicit: dict[str, MigProfile] | None = None,
    refused: dict[str, Note] | None = None,
) -> MigPlan:
    """Place every replica of every service on as few GPUs as possible, then with the least
    memory left over; what cannot be placed is returned with the reason. ``explicit`` names
    the profile a service asked for (it must hold the service); ``refused`` services cannot
    be placed on this GPU at all (a profile it does not have)."""
    explicit = explicit or {}
    refused = refused or {}
    items: list[tuple[str, MigProfile]] = []
    unplaced: list[tuple[str, Note]] = []
    needed = 0.0
    largest = max(profiles, key=lambda p: (p.memory_slices, p.memory_gb))
    for service in services:
        if service.name in refused:
            unplaced.append((service.name, refused[service.name]))
            continue
        asked = explicit.get(service.name)
        if asked is not None and asked.memory_gib < service.memory_gib:
            too_small = note(
                "mig_profile_too_small",
                service=service.name,
                profile=asked.profile,
                needed=round(service.memory_gib, 1),
                capacity=round(asked.memory_gib, 1),
            )
            unplaced.append((service.name, too_small))
            continue
        profile = asked or choose_profile(service, profiles)
        if profile is None:
            unplaced.append(
                (
                    service.name,
                    note(
                        "mig_too_big",
                        service=service.name,
                        needed=round(service.memory_gib, 1),
                        largest=largest.profile,
                        largest_gib=round(largest.memory_gib, 1),
                    ),
                )
            )
            continue
        for replica in range(service.replicas):
            label = service.name if service.replicas == 1 else f"{service.name}#{replica + 1}"
            items.append((label, profile))
            needed += service.memory_gib
    gpus = _fill(items)
    allotted = sum(i.profile.memory_gib for g in gpus for i in g.instances)
    return MigPlan(gpu_id, tuple(gpus), tuple(unplaced), needed, allotted)


def _fill(items: Sequence[tuple[str, MigProfile]]) -> list[GpuPlan]:
    """First fit by counts, not permutations: replicas of one profile are interchangeable, so
    a GPU takes as many of each profile as still fit (largest profiles first), and the mix
    it ends with repeats on as many GPUs as the remaining counts allow. The cost grows with
    the number of distinct mixes (a handful), not with the replicas: 64 services × 1,000
    replicas pack in milliseconds."""
    groups: dict[str, tuple[MigProfile, deque[str]]] = {}
    for label, profile in items:
        groups.setdefault(profile.profile, (profile, deque()))[1].append(label)
    order = sorted(
        groups.values(), key=lambda g: (-g[0].memory_slices, -g[0].compute_slices, g[0].profile)
    )
    gpus: list[GpuPlan] = []
    while any(labels for _p, labels in order):
        mix: list[tuple[str, MigProfile]] = []
        counts: dict[str, int] = {}
        for profile, labels in order:
            while counts.get(profile.profile, 0) < len(labels):
                trial = [*mix, (f"#{len(mix)}", profile)]
                if _place(trial) is None:
                    break
                mix = trial
                counts[profile.profile] = counts.get(profile.profile, 0) + 1
        placement = _place(mix)
        if not mix or placement is None:  # a lone instance always fits an empty GPU
            raise AssertionError("an instance that fits no empty GPU")
        problem = check_gpu(placement)
        if problem is not None:  # the search only emits valid placements
            raise AssertionError(problem.render())
        repeats = min(len(groups[name][1]) // count for name, count in counts.items())
        for _ in range(repeats):
            instances = tuple(
                Instance(groups[inst.profile.profile][1].popleft(), inst.profile, inst.start)
                for inst in placement
            )
            gpus.append(GpuPlan(len(gpus), instances))
    return gpus


def check_mix(profiles: Sequence[MigProfile]) -> Note | None:
    """Why a mix of profiles (named by the user) cannot share one GPU, or None."""
    if _place([(f"#{i}", p) for i, p in enumerate(profiles)]) is not None:
        return None
    compute = sum(p.compute_slices for p in profiles)
    compute_limit = profiles[0].gpu_compute_slices if profiles else MIG_COMPUTE_SLICES
    memory_limit = profiles[0].gpu_memory_slices if profiles else MIG_MEMORY_SLICES
    if compute > compute_limit:
        return note("mig_compute", compute=compute, limit=compute_limit)
    memory = sum(p.memory_slices for p in profiles)
    if memory > memory_limit:
        return note("mig_memory", memory=memory, limit=memory_limit)
    counts: dict[str, int] = {}
    for p in profiles:
        counts[p.profile] = counts.get(p.profile, 0) + 1
        if counts[p.profile] > p.max_instances:
            return note("mig_too_many", profile=p.profile, limit=p.max_instances)
    return note("mig_no_placement", profiles=", ".join(p.profile for p in profiles))
