"""What :func:`whichgpu.plan.plan` answers: one job on one hardware."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from whichgpu.inputs.requests import Component
from whichgpu.notes import Note

if TYPE_CHECKING:
    from whichgpu.estimate.serving_types import ServingPlan
    from whichgpu.estimate.throughput import ThroughputEstimate
    from whichgpu.job import Checkpointing, Job


@dataclass(frozen=True)
class Blocker:
    """Why a job cannot run on a GPU, as data (each kind its own reason, rendered by code):

    - ``math_unit``: the tensor-core format its precision needs (``unit``: BF16, TF32, FP8);
      for the engine's kinds, ``unit`` is the weights' format (None: 16-bit);
    - ``cuda_only``: the serving engine runs on NVIDIA GPUs only;
    - ``engine_capability``: the engine runs from compute capability ``needed`` at all;
    - ``format_capability``: the engine runs the weights' format from ``needed``;
    - ``layout_split``: separate prefill and decode workers asked for, on fewer than two GPUs;
    - ``replica_instance``: a served model no replica within one instance holds (``needed``:
      the GPUs an instance has), which one instance of ``instance_gpus`` would (None: no
      instance of these GPUs is sold that large)."""

    kind: Literal[
        "math_unit",
        "cuda_only",
        "engine_capability",
        "format_capability",
        "layout_split",
        "replica_instance",
    ]
    unit: str | None = None
    needed: float | None = None
    #: ``replica_instance``: the fewest GPUs one instance holding a replica would need
    instance_gpus: int | None = None


@dataclass(frozen=True)
class Run:
    """One job (a workload's component) planned on one hardware: whether it fits, the
    settings chosen, its speed with its likely range, its time, what bounds it, and notes."""

    component: Component
    fits: bool
    needed_gib: float | None
    capacity_gib: float
    strategy: str
    throughput: float | None = None
    throughput_low: float | None = None
    throughput_high: float | None = None
    unit: str | None = None
    time_s: float | None = None
    bound: str | None = None
    provenance: str = ""
    meets_rate: bool = True
    notes: tuple[Note, ...] = ()
    #: What was chosen for settings the user left open (micro-batch, checkpointing)
    chosen: tuple[Note, ...] = ()
    #: Why the job cannot run here at all (a tensor-core format, an engine's hardware)
    blocker: Blocker | None = None
    #: The job as configured for this hardware (layout, micro-batch, accumulation…)
    job: Job | None = None
    #: A served model's plan on this hardware: engine, replicas × GPUs, its operating point
    serving: ServingPlan | None = None
    #: False where no layout on this hardware makes the user's global batch (micro-batch ×
    #: data-parallel GPUs × accumulation)
    global_batch_made: bool = True
    #: The estimate in full as ``estimate`` shows it (the step term by term, the serving
    #: plan, the image pipeline's memory), where the job runs here
    estimate: ThroughputEstimate | None = None

    @property
    def time_high_s(self) -> float | None:
        """The time at the slow end of the throughput's likely range (its 10th percentile:
        the job's work over the low rate), what a deadline is held to; hours of use are
        fixed (serving, interactive work)."""
        if self.time_s is None or self.component.hours is not None:
            return self.time_s
        if not self.throughput or not self.throughput_low:
            return self.time_s
        return self.time_s * self.throughput / self.throughput_low

    @property
    def held_rps(self) -> float | None:
        """A served run's requests/s, all its replicas together, as its plan counts on them:
        the slow end of its range where it rests on a factor nobody measured and its
        throughput binds it (:func:`~whichgpu.estimate.latency_range.held_share`); what its
        blocker, the infeasible answer's reach, the table and the chart state. None where
        nothing is served."""
        if self.serving is None:
            return None
        from whichgpu.estimate.latency_range import held_share

        return self.serving.served_rps * held_share(self.provenance, self.serving.binding)

    @property
    def batch(self) -> int | None:
        return None if self.job is None else self.job.batch

    @property
    def checkpointing(self) -> Checkpointing | None:
        return None if self.job is None else self.job.checkpointing
