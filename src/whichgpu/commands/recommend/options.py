"""The recommender's results: each priced candidate (:class:`Option`) and the ranked answer
(:class:`Recommendation`), shared by the engine that builds them and the reasons that
explain them."""

from __future__ import annotations

from dataclasses import dataclass, field

from whichgpu.catalog.records import GPU, Price
from whichgpu.estimate.assumptions import MEDIAN_ERROR_PER_BAND
from whichgpu.frozen import memo
from whichgpu.inputs.requests import Workload
from whichgpu.notes import Note, count_label
from whichgpu.plan import Hardware, Run


@dataclass(frozen=True)
class Option:
    """One candidate, priced: hardware, what it does with each component, and its cost."""

    hardware: Hardware
    market: str | None
    runs: tuple[Run, ...]
    usd_per_h: float | None = None
    usd_per_h_high: float | None = None
    price_provider: str | None = None
    price_source: str | None = None
    price_as_of: str | None = None
    #: The cheapest listing the rent is priced from: its instance type and shape
    listing: Price | None = None
    #: Unpriced because no offer's instance shape rents this many: the shapes sold
    sold_as: tuple[int, ...] = ()
    purchase_usd: float | None = None
    #: Buying: the electricity part of ``usd_per_h`` (the rest is the cards, amortised)
    power_usd_per_h: float | None = None
    break_even_months: float | None = None
    #: Buying: the rental ``break_even_months`` is against (the same cards' cheapest dated
    #: offer, or undated where none is)
    rent_compared: Price | None = None
    time_s: float | None = None
    cost_usd: float | None = None
    cost_usd_high: float | None = None
    feasible: bool = False
    blockers: tuple[Note, ...] = ()
    score: float | None = None
    pareto: bool = False
    #: Within the estimate's typical error of the pick on the objective: equivalent to it
    tied: bool = False

    @memo
    def extrapolated(self) -> bool:
        """Whether a component's speed here rests on a factor nobody measured for this GPU
        architecture and work (a prior, another regime's or a predecessor's): ranked at the
        slow end of its (wider) range, so that it does not beat a measured option inside
        its error."""
        from whichgpu.estimate.efficiency_model import extrapolated

        return any(extrapolated(run.provenance) for run in self.runs)

    @memo
    def time_high_s(self) -> float | None:
        """The components one after another, each at the slow end of its likely range
        (asked by every key the ranking sorts on: once per option)."""
        times = [run.time_high_s for run in self.runs]
        if not times or any(t is None for t in times):
            return None
        return sum(t for t in times if t is not None)

    @property
    def cost_usd_slow(self) -> float | None:
        """The cost at the cheapest offer for :attr:`time_high_s` (what a budget is held to
        at the conservative end)."""
        if self.usd_per_h is None or self.time_high_s is None:
            return None
        if self.cost_usd is not None and self.time_s:
            return self.cost_usd * self.time_high_s / self.time_s
        return self.usd_per_h * self.time_high_s / 3600

    @property
    def gpu(self) -> GPU:
        return self.hardware.gpu

    @property
    def gpus(self) -> int:
        return self.hardware.gpus

    @property
    def fits(self) -> bool:
        return all(r.fits for r in self.runs)

    @property
    def throughput(self) -> float | None:
        return self.runs[0].throughput if self.runs else None

    @property
    def instance_usd_per_h(self) -> float | None:
        """One rented instance's price an hour (the listing's GPUs at its per-GPU price)."""
        return None if self.listing is None else self.listing.instance_usd_per_h

    @property
    def value(self) -> float | None:
        """Throughput per dollar-hour of the first component (work per dollar)."""
        if self.throughput is None or not self.usd_per_h:
            return None
        return self.throughput / self.usd_per_h

    @property
    def key(self) -> tuple[str, int, str]:
        return (self.gpu.id, self.hardware.count, self.hardware.mig_profile or "")


def typical_error(option: Option) -> float:
    """The relative typical error of ``option``'s estimate: the median absolute error implied
    by its throughput's 10th–90th percentile band (the fit's leave-one-out spread, or the
    spread over every regime where the estimate carries none)."""
    from whichgpu.estimate.efficiency_model import load_efficiency

    run = option.runs[0] if option.runs else None
    if run is not None and run.throughput and run.throughput_low and run.throughput_high:
        width = (run.throughput_high - run.throughput_low) / run.throughput
        if width > 0:
            return MEDIAN_ERROR_PER_BAND * width
    low, high = load_efficiency()[1]["*"]
    return MEDIAN_ERROR_PER_BAND * (high - low)


@dataclass(frozen=True)
class Recommendation:
    workload: Workload
    objective: str
    options: tuple[Option, ...]
    pick: Option | None
    reasons: tuple[Note, ...]
    warnings: tuple[Note, ...]
    assumptions: tuple[Note, ...]
    infeasible: tuple[Note, ...] = ()
    baseline: Option | None = None
    unpriced: tuple[str, ...] = field(default_factory=tuple)


def hardware_label(option: Option, count_one: bool = False) -> str:
    """The one way whichgpu names a hardware choice, in reasons, tables, charts and exports:
    ``2 × RTX A6000``; MIG slices as ``7 × 1g.10gb / A100 80GB`` (the slices, then the
    cards they are cut from)."""
    hw = option.hardware
    cards = count_label(option.gpus, option.gpu.short_name, count_one)
    if hw.mig is not None:
        return f"{count_label(hw.services, hw.mig.profile, True)} / {cards}"
    return cards


def hw_text(option: Option) -> str:
    """The option's hardware as the answer's sentences name it."""
    return hardware_label(option)


@dataclass(frozen=True)
class Between:
    """The network between the instances of an option rented as several: its kind (the
    job's ``network``), Gb/s an instance (as sold, else as assumed), and the provider's name
    for it where the option is timed on its offer's network."""

    network: str
    gbit: float
    fabric: str | None


def between_instances(option: Option) -> Between | None:
    """:class:`Between` of ``option``, None where one instance holds it (the one reading
    the table row, the JSON and the reason share): NVLink where the instances lie in one
    rack-scale NVLink domain (GB200 NVL72's 72 GPUs, sold as trays of 4), the GPUs' own
    links then, one direction's Gb/s an instance."""
    from whichgpu.estimate.parallel import in_rack_domain, instance_gbit

    hw = option.hardware
    if hw.node_gpus is None:
        return None
    if in_rack_domain(option.gpu, option.gpus):
        return Between("nvlink", option.gpu.nvlink_gb_per_s / 2 * 8 * hw.node_gpus, "NVLink")
    job = next((run.job for run in option.runs if run.job is not None), None)
    network = "ethernet" if job is None else job.network
    sold = None if job is None else job.network_gbit
    link = hw.link
    fabric = link.fabric if link is not None and sold is not None and sold == link.gbit else None
    return Between(network, instance_gbit(option.gpu, network, hw.node_gpus, sold), fabric)


def money(value: float | None) -> float:
    """Dollars to the cent, for a note's parameter."""
    return round(value or 0.0, 2)


def cost_of(option: Option) -> float | None:
    """The option's cost per job, else per hour."""
    return option.cost_usd if option.cost_usd is not None else option.usd_per_h


def score_of(option: Option, objective: str) -> float | None:
    """The objective's figure: $ per job (or $/h), seconds (or −throughput), throughput
    per $/h."""
    if objective == "cost":
        return option.cost_usd if option.cost_usd is not None else option.usd_per_h
    if objective == "time":
        return option.time_s if option.time_s is not None else option.throughput
    return option.value


def held_cost_of(option: Option) -> float | None:
    """:func:`cost_of` as the ranking holds it: at the slow end of the likely range where
    the option's speed rests on an extrapolated factor (what it may be compared at)."""
    if option.extrapolated and option.cost_usd is not None:
        return option.cost_usd_slow
    return cost_of(option)


def hours_of(seconds: float | None) -> float:
    """Seconds as hours to the hundredth, for a note's parameter."""
    return round((seconds or 0.0) / 3600, 2)
