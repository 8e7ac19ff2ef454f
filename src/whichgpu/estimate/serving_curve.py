"""A served replica's curve: the decode step ``t_d`` at the powers of two up to the
sequences its KV cache holds, the prompt's prefill ``t_p`` and its cost inside a busy cycle
``c``, each read in log-batch between the grid's points (the planner reads them thousands
of times a request: :mod:`whichgpu.estimate.serving_plan`, which builds and searches it)."""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass


def _log_slopes(values: Sequence[float], logs: Sequence[float]) -> tuple[float, ...]:
    """The slopes of ``values`` between consecutive grid points, in log-batch."""
    return tuple(
        (v1 - v0) / (l1 - l0) if l1 > l0 else 0.0
        for v0, v1, l0, l1 in zip(values, values[1:], logs, logs[1:], strict=False)
    )


@dataclass(frozen=True)
class Curve:
    """``t_d`` at the powers of two up to ``b_max`` (and ``b_max``), ``t_p``, the lengths."""

    batches: tuple[int, ...]
    decode_s: tuple[float, ...]
    prefill_s: float
    #: GPU seconds a prompt takes inside a busy cycle (``c``)
    cycle_prefill_s: float
    prompt: int
    generate: int
    b_max: int
    chunk_tokens: int
    continuous: bool
    #: The roofline's bound at each grid batch
    bounds: tuple[str, ...] = ()
    #: The host's seconds to launch one forward pass (an eager engine's: no pass is faster)
    host_s: float = 0.0
    #: Static batching: the seconds of the ``b_max`` prompts' prefill, one pass
    batch_prefill_s: float = 0.0
    #: Decode steps a scheduler pass runs before it admits arrivals (multi-step scheduling)
    window_steps: int = 1
    #: ``c`` at each grid batch (the cycle's η moves with the batch; ``cycle_prefill_s`` is
    #: b_max's): a prompt's cost at a load is read at the batch that load runs
    cycle_prefills: tuple[float, ...] = ()
    #: Tokens a sequence gets a scheduler step (τ under speculative decoding, else 1):
    #: ``decode_s`` is a token's time, a step is this many tokens' (what a prompt's chunk and
    #: a window wait for)
    step_tokens: float = 1.0

    def window_wait_s(self, batch: float, quantile: float) -> float:
        """An arrival's wait for the multi-step window it lands in to end, beyond the one
        step a single-step scheduler holds it: arrivals fall uniformly over the window of
        ``k`` steps, so the ``quantile`` one waits ``q·(k − 1)`` steps more."""
        return quantile * (self.window_steps - 1) * self.step_s(batch) * self.step_tokens

    def __post_init__(self) -> None:
        # the log-batch interpolation's knots, once: the planner reads t_d thousands of times
        logs = [math.log(b) for b in self.batches]
        object.__setattr__(self, "_logs", tuple(logs))
        object.__setattr__(self, "_slopes", _log_slopes(self.decode_s, logs))
        # ``c`` and what a prompt stretches the decode steps by (the planner's ``_tpot``'s
        # ``e``) at each grid batch, once
        prompt = max(self.prompt, 1)
        chunk = min(self.chunk_tokens or prompt, prompt)
        one = self.step_s(1.0) * self.step_tokens  # one sequence's scheduler step
        cs = self.cycle_prefills or (self.cycle_prefill_s,) * len(self.batches)
        excess = [max(0.0, c - math.ceil(prompt / chunk) * min(one, chunk * c / prompt))
                  for c in cs]  # fmt: skip
        object.__setattr__(self, "_cs", (tuple(cs), _log_slopes(cs, logs)))
        object.__setattr__(self, "_excess", (tuple(excess), _log_slopes(excess, logs)))

    def cycle_prefill_at(self, batch: float) -> float:
        """``c`` at ``batch`` sequences, interpolated in log-batch between the grid's."""
        return self._read(self._cs, *self._knot(batch))  # type: ignore[attr-defined]

    def excess_s(self, batch: float) -> float:
        """:func:`~whichgpu.estimate.serving_points._tpot`'s ``e`` at ``batch`` sequences."""
        return self._read(self._excess, *self._knot(batch))  # type: ignore[attr-defined]

    def step_and_excess_s(self, batch: float) -> tuple[float, float]:
        """:meth:`step_s` and :meth:`excess_s` at ``batch``, one lookup (the planner's
        hottest read: every fixed-point iteration of every probe)."""
        j, x = self._knot(batch)
        step = self._read((self.decode_s, self._slopes), j, x)  # type: ignore[attr-defined]
        return step, self._read(self._excess, j, x)  # type: ignore[attr-defined]

    def _knot(self, batch: float) -> tuple[int, float]:
        """The grid point at or below ``batch`` (clamped to the grid) and the log-batch
        distance from it."""
        batch = min(max(batch, 1.0), float(self.b_max))
        i = bisect.bisect_left(self.batches, batch)
        if i == 0:
            return 0, 0.0
        if i >= len(self.batches):
            return len(self.batches) - 1, 0.0
        logs: tuple[float, ...] = self._logs  # type: ignore[attr-defined]
        return i - 1, math.log(batch) - logs[i - 1]

    @staticmethod
    def _read(table: tuple[tuple[float, ...], tuple[float, ...]], j: int, x: float) -> float:
        values, slopes = table
        return values[j] + slopes[j] * x if x else values[j]

    def prompts_s(self, batch: float | None = None) -> float:
        """Seconds to prefill what a pass prefills (a prompt under continuous batching; a
        static batch of ``batch`` prompts, ``b_max`` when None): its GPU time, or the host's
        launches of the pass where they take longer."""
        if self.continuous:
            return max(self.prefill_s, self.host_s)
        share = (batch or self.b_max) / self.b_max  # b_max's pass, scaled to the batch
        return max(share * self.batch_prefill_s, self.host_s)

    def static_cycle_s(self, batch: float) -> float:
        """A static batch's whole run: its prompts' pass and its decode steps."""
        return self.prompts_s(batch) + self.generate * self.step_s(batch)

    def bound_at(self, batch: float) -> str:
        """The bound of the grid batch nearest above ``batch`` sequences."""
        i = min(bisect.bisect_left(self.batches, batch), len(self.batches) - 1)
        return self.bounds[i] if self.bounds else "compute"

    def step_s(self, batch: float) -> float:
        """``t_d`` at ``batch`` sequences, interpolated in log-batch between the grid's."""
        return self._read((self.decode_s, self._slopes), *self._knot(batch))  # type: ignore[attr-defined]
