"""The same served workload in the lower weight format engineers commonly serve it in.

A 16-bit model served at a request rate costs about half as much in FP8 on the GPUs whose
tensor cores run FP8 (Ada, Hopper, Blackwell; and CDNA 3 through the engines' ROCm builds):
half the weight bytes a decode step reads, twice the KV cache room. Where the search in FP8
finds an option cheaper (or faster) than the pick by more than the pick's estimate error,
or one at all where nothing met the request, the answer names it, with its quality caveat:
FP8 weights and activations keep accuracy within about 1 % of BF16 across model sizes
(Kurtic et al., 2024, "Give Me BF16 or Give Me Death? Accuracy-Performance Trade-Offs in
LLM Quantization", arXiv:2411.02355, §4).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from whichgpu.errors import Ref
from whichgpu.notes import Note, note

if TYPE_CHECKING:
    from collections.abc import Sequence

    from whichgpu.commands.recommend.options import Option
    from whichgpu.inputs.requests import Workload

#: The weight format the alternative is planned in (``--quant``)
LOWER_FORMAT = "fp8"


def in_lower_format(workload: Workload) -> Workload | None:
    """``workload`` with each served 16-bit model component (a request rate, a latency target
    or an engine given; no precision, no quantisation asked, a 16-bit checkpoint) in
    :data:`LOWER_FORMAT`; None where no component changes."""
    from whichgpu.plan.jobs import model_job, serves

    changed = False
    components = []
    for component in workload.components:
        if serves(component) and component.quant is None and component.precision is None:
            _arch, job = model_job(component)
            if job.quant is None:  # a 16-bit checkpoint (an FP8 one is served in FP8 already)
                component = replace(component, quant=LOWER_FORMAT)
                changed = True
        components.append(component)
    return replace(workload, components=tuple(components)) if changed else None


def lower_format_note(ranked: Sequence[Option], objective: str, pick: Option | None) -> Note | None:
    """What the workload would take in :data:`LOWER_FORMAT` (``ranked``: the options of
    :func:`in_lower_format`'s workload, ranked on ``objective``) where that beats the pick
    by more than its estimate error, or where nothing met the request: the option, its
    figure beside the pick's, the field that asks for it."""
    from whichgpu.commands.recommend.options import hw_text, money, score_of, typical_error

    best = ranked[0] if ranked and ranked[0].feasible else None
    if best is None:
        return None
    field = Ref(("quant",))
    if pick is None:
        return note("infeasible_quant", quant=LOWER_FORMAT, option=hw_text(best),
                    usd_per_h=money(best.usd_per_h), field=field)  # fmt: skip
    mine, theirs = score_of(pick, objective), score_of(best, objective)
    if mine is None or theirs is None or not mine:
        return None
    higher_better = objective == "value" or (objective == "time" and pick.time_s is None)
    gain = (theirs - mine) / mine if higher_better else (mine - theirs) / mine
    if gain <= typical_error(pick):
        return None
    return note("reason_quant_cheaper", quant=LOWER_FORMAT, option=hw_text(best),
                pick=hw_text(pick), usd_per_h=money(best.usd_per_h),
                pick_usd_per_h=money(pick.usd_per_h), gain=round(gain, 3),
                field=field)  # fmt: skip
