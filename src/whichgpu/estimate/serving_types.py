"""What the serving planner answers (:mod:`whichgpu.estimate.serving_plan`): latency targets,
a replica's operating point, and the plan of replicas. Plain records, shared with the
estimate's and the recommendation's renderers."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Targets:
    """Latency limits at a quantile (0.5 for p50, 0.95 for p95, 0.99 for p99)."""

    ttft_s: float | None = None
    tpot_s: float | None = None
    quantile: float = 0.5
    #: How much slower than its estimate a plan's latencies are held to be (1: the estimate
    #: itself; above 1: the slow end of its likely range, where a target must still be met)
    margin: float = 1.0
    #: How much further a time to first token is held beyond ``margin``: its prefill's
    #: likely range is wider than a decode step's
    #: (:func:`~whichgpu.estimate.latency_range.ttft_extra`; 1 with the estimate itself)
    ttft_extra: float = 1.0

    @property
    def any(self) -> bool:
        return self.ttft_s is not None or self.tpot_s is not None

    def limit_s(self, target: str) -> float | None:
        """The limit of ``target`` (``"ttft"`` or ``"tpot"``, as a plan's ``unmet`` names it),
        as stated."""
        return self.ttft_s if target == "ttft" else self.tpot_s

    @property
    def ttft_limit_s(self) -> float | None:
        """The estimated time to first token that keeps the slow end within the target."""
        return None if self.ttft_s is None else self.ttft_s / self.margin_of("ttft")

    @property
    def tpot_limit_s(self) -> float | None:
        """The estimated time per output token that keeps the slow end within the target."""
        return None if self.tpot_s is None else self.tpot_s / self.margin_of("tpot")

    def margin_of(self, target: str) -> float:
        """How much slower than estimated ``target``'s latency (``"ttft"`` or ``"tpot"``) is
        held to be: the slow end of its own likely range."""
        return self.margin * (self.ttft_extra if target == "ttft" else 1.0)


@dataclass(frozen=True)
class ServingPoint:
    """One replica at an arrival rate: requests/s, sequences in flight, its latencies and
    its output tokens/s."""

    rate_rps: float
    concurrency: float
    ttft_s: float
    tpot_s: float

    def tokens_per_s(self, generate: int) -> float:
        return self.rate_rps * max(generate, 1)


@dataclass(frozen=True)
class Disaggregated:
    """A disaggregated layout: its pools, what it serves under the targets, the latencies at
    that rate, and the KV transfer a request waits for."""

    prefill_tp: int
    prefill_workers: int
    decode_tp: int
    decode_workers: int
    capacity_rps: float
    ttft_s: float
    tpot_s: float
    transfer_s: float
    #: The pool that limits it: ``prefill`` (the TTFT target) or ``decode`` (TPOT, KV slots)
    binding: str
    #: Sequences a decode worker holds at its capacity
    decode_batch: float = 1.0

    def label(self) -> str:
        """``3×1 prefill + 5×1 decode``: workers × GPUs of each pool."""
        return (f"{self.prefill_workers}×{self.prefill_tp} prefill + "
                f"{self.decode_workers}×{self.decode_tp} decode")  # fmt: skip

    @property
    def gpus(self) -> int:
        return self.prefill_tp * self.prefill_workers + self.decode_tp * self.decode_workers


@dataclass(frozen=True)
class FrontPoint:
    """One layout at one load: ``decode_gpus`` GPUs a worker (a replica's, or a decode
    worker's), ``prefill_gpus`` a prefill worker's (0: replicas, prefill and decode on the
    same GPUs)."""

    decode_gpus: int
    prefill_gpus: int
    tokens_per_s_per_user: float
    tokens_per_s_per_gpu: float
    ttft_s: float
    tpot_s: float
    attention_dp: bool = False

    @property
    def disaggregated(self) -> bool:
        return self.prefill_gpus > 0


@dataclass(frozen=True)
class ServingPlan:
    engine: str
    gpus_per_replica: int
    replicas: int
    #: The most sequences a replica batches: the engine's cap or what its KV cache holds
    max_sequences: int
    #: A replica's highest rate under the targets (with none: before its queue grows unbounded)
    capacity: ServingPoint
    #: Each replica at the demand (the capacity where no demand is given)
    operating: ServingPoint
    #: What stops a replica from serving more: ``ttft``, ``tpot`` or ``throughput``
    binding: str
    targets: Targets
    eta: float
    #: A target no load meets, and the best the replica reaches: ("ttft", 1.8), or None
    unmet: tuple[str, float] | None = None
    #: Output tokens a request (what a request rate is in tokens/s)
    generate: int = 1
    #: The roofline's bound of a decode step at the operating point
    bound: str = "compute"
    #: The other splits of the same GPUs the search compared: (GPUs a replica, replicas,
    #: requests/s they serve under the targets), best first
    alternatives: tuple[tuple[int, int, float], ...] = ()
    #: The KV cache's dtype the replica was planned with (the user's, or the checkpoint's
    #: as the engine takes it: an FP8 checkpoint's FP8 on TensorRT-LLM; "auto": the model's)
    kv_dtype: str = "auto"
    #: Prefill and decode on separate workers (:mod:`whichgpu.estimate.disaggregated`),
    #: where that serves more than replicas of the same GPUs: the replicas' fields then
    #: describe the whole (one "replica" of all the GPUs)
    disaggregated: Disaggregated | None = None
    #: What the best aggregated replicas of the same GPUs serve, where the plan is
    #: disaggregated (requests/s under the targets), and those replicas' plan
    aggregated_rps: float = 0.0
    replicas_plan: ServingPlan | None = None
    #: What the best disaggregated layout of the same GPUs serves, where the plan is of
    #: replicas and an engine's disaggregated layout was planned (0: none)
    disaggregated_rps: float = 0.0
    #: ``disaggregated_rps`` is the split's at the slow end of its wider range (no serving
    #: run of the fit ran separate workers), as the search weighed it against the replicas
    disaggregated_held: bool = False
    #: A mixture of experts served with data-parallel attention and expert-parallel MoE on
    #: each replica's GPUs (:attr:`~whichgpu.job.Job.attention_dp`), not tensor parallelism
    attention_dp: bool = False
    #: What the other layout of the same replicas serves under the targets (requests/s;
    #: 0 where only one was planned): tensor parallelism's where the plan runs attention
    #: data-parallel, and the other way round
    other_layout_rps: float = 0.0
    #: The likely range of its time to first token and of its time per output token, as
    #: ratios to the estimate (:func:`~whichgpu.estimate.latency_range.latency_band`; set
    #: where the plan is stated, with what it rests on)
    ttft_band: tuple[float, float] = (1.0, 1.0)
    tpot_band: tuple[float, float] = (1.0, 1.0)
    #: The step overhead the plan carries from another engine's harness
    #: (:func:`~whichgpu.estimate.latency_range.borrowed_step_s`): the fast end of a
    #: latency's likely range is the time without it (:meth:`likely_s`)
    borrowed_step_s: float = 0.0
    #: Output tokens a second a GPU against a user's over the layouts the planner weighed
    #: (:func:`~whichgpu.estimate.serving_front.serving_front`; set where one plan is stated)
    front: tuple[FrontPoint, ...] = ()

    @property
    def gpus(self) -> int:
        return self.gpus_per_replica * self.replicas

    def likely_s(self, time_s: float, target: str) -> tuple[float, float]:
        """The likely range of a latency the plan states, ``time_s`` of ``target``
        (``"ttft"`` or ``"tpot"``): its band, the fast end without the borrowed overhead."""
        from whichgpu.estimate.overhead_band import widened

        band = self.ttft_band if target == "ttft" else self.tpot_band
        low, high = widened(band, self.borrowed_step_s, time_s)
        return time_s * low, time_s * high

    @property
    def served_rps(self) -> float:
        """Requests/s all the replicas sustain under the targets."""
        return self.replicas * self.capacity.rate_rps

    def usd_per_million_tokens(self, usd_per_h: float | None) -> float | None:
        """What a million output tokens cost at the plan's operating point (its replicas at
        the demand, or at capacity where none is given), at ``usd_per_h``."""
        served = self.operating.tokens_per_s(self.generate) * self.replicas
        if usd_per_h is None or served <= 0:
            return None
        return usd_per_h / (served * 3600 / 1e6)
