"""The article's claims C1–C44, each checked against the catalog: confirmed, corrected or not
checkable yet, with the figures and sources behind the verdict. Feeds the generated docs page
docs/article-vs-whichgpu.md."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from whichgpu.article import ARTICLE_SOURCE, article_gpu_ids, check_figures, check_rent_price
from whichgpu.catalog.prices import price_range
from whichgpu.catalog.records import GPU, RENTAL_MARKETS, Claim, Source
from whichgpu.catalog.store import Catalog
from whichgpu.i18n import _, fmt
from whichgpu.inputs.fields import FIELDS, format_field, format_number, format_usd_range

Verdict = Literal["confirmed", "corrected", "not checkable yet"]


@dataclass(frozen=True)
class ClaimCheck:
    claim: Claim
    verdict: Verdict
    details: tuple[str, ...]
    sources: tuple[Source, ...]


def _stated(claim: Claim) -> list[float]:
    return [float(x) for x in (claim.stated or "").split()]


def check_claim(catalog: Catalog, claim: Claim) -> ClaimCheck:
    gpus = [catalog.gpu(g) for g in article_gpu_ids(catalog)]
    details: list[str] = []
    sources: dict[str, Source] = {}

    def cite(source_id: str | None) -> None:
        source = catalog.source(source_id) if source_id else None
        if source is not None:
            sources.setdefault(source.id, source)

    verdict: Verdict
    if claim.check == "evidence":
        assert claim.verdict is not None
        verdict = claim.verdict
        details.append(claim.explanation or "")
        cite(claim.source)
    elif claim.check == "figures":
        checks = [c for c in check_figures(catalog) if c.figure.claim == claim.claim]
        for c in checks:
            gpu = catalog.gpu(c.figure.gpu)
            mark = "✓" if c.confirmed else "✗"
            details.append(
                f"{mark} {gpu.name}, {_(FIELDS[c.figure.field][0])}: "
                + fmt(
                    _("article {article}; catalog {value}"),
                    article=c.figure.article_text,
                    value=format_field(c.figure.field, c.value),
                )
                + ("" if c.correction is None else f" — {c.correction.render()}")
            )
            sources.setdefault(c.citation.source.id, c.citation.source)
        verdict = "confirmed" if all(c.confirmed for c in checks) else "corrected"
    elif claim.check == "purchase":
        verdicts = []
        for gpu in gpus:
            rows = catalog.purchases_current(gpu.id)
            article = [p for p in rows if p.source == ARTICLE_SOURCE]
            public = [p for p in rows if p.source != ARTICLE_SOURCE and p.condition == "used"]
            if not article:
                continue
            said = article[0].low_usd
            if not public:
                verdicts.append("not checkable yet")
                details.append(
                    fmt(
                        _("{gpu}: article ${said:,.0f} used; no public used price found"),
                        gpu=gpu.name,
                        said=said,
                    )
                )
                continue
            inside = any(p.low_usd <= said <= p.high_usd for p in public)
            verdicts.append("confirmed" if inside else "corrected")
            for p in public:
                cite(p.source)
                details.append(
                    fmt(
                        _("{gpu}: article ${said:,.0f} used; published {range} ({as_of})"),
                        gpu=gpu.name,
                        said=said,
                        range=format_usd_range(p.low_usd, p.high_usd),
                        as_of=p.as_of,
                    )
                )
        verdict = _combine(verdicts)
    elif claim.check == "rent":
        verdicts = []
        for gpu in gpus:
            found = check_rent_price(catalog, gpu.id)
            if found is None:
                verdicts.append("confirmed")
                details.append(
                    fmt(_("{gpu}: public listings fall in the article's range"), gpu=gpu.name)
                )
            else:
                verdicts.append(
                    "not checkable yet"
                    if found.code == "article_price_unconfirmed"
                    else "corrected"
                )
                details.append(found.render())
            for listing in catalog.listings_for(gpu.id, RENTAL_MARKETS):
                cite(listing.source)
        verdict = _combine(verdicts)
    elif claim.check == "hours_per_100":
        stated = _stated(claim)
        ok = True
        for index, gpu in enumerate(gpus):
            rent = _article_rent(catalog, gpu.id)
            if rent is None:
                continue
            low, high = 100 / rent[1], 100 / rent[0]
            pair = stated[2 * index : 2 * index + 2]
            match = [round(low), round(high)] == [round(x) for x in pair]
            ok &= match
            details.append(
                fmt(
                    _("{gpu}: $100 / {prices} = {low}–{high} hours; the article says {said}"),
                    gpu=gpu.name,
                    prices=format_usd_range(*rent),
                    low=round(low),
                    high=round(high),
                    said="–".join(format_number(x) for x in pair),
                )
            )
        cite(ARTICLE_SOURCE)
        details.append(_("Arithmetic on the article's own prices (C20), which are checked there."))
        verdict = "confirmed" if ok else "corrected"
    elif claim.check == "rent_ratio":
        a100, a6000 = gpus[0], gpus[1]
        base, other = _article_rent(catalog, a100.id), _article_rent(catalog, a6000.id)
        assert base is not None and other is not None
        third, low_share, high_share = _stated(claim)
        ratios = (other[0] / base[0], other[1] / base[1])
        third_ok = all(abs(r / third - 1) <= 0.1 for r in ratios)
        share_ok = all(low_share <= r <= high_share for r in ratios)
        details.append(
            fmt(
                _(
                    "By the article's own prices the {b} costs {r1:.0%}–{r2:.0%} of the {a}: "
                    "about 1/3 "
                    "as it says, not the 40–50 % it also says."
                ),
                a=a100.name,
                b=a6000.name,
                r1=min(ratios),
                r2=max(ratios),
            )
        )
        cite(ARTICLE_SOURCE)
        verdict = "confirmed" if third_ok and share_ok else "corrected"
    elif claim.check in ("ratio_bandwidth", "ratio_fp64"):
        field = "memory_bandwidth_gb_per_s" if claim.check == "ratio_bandwidth" else "fp64_tflops"
        a, b = gpus[0], gpus[1]
        ratio = getattr(a, field) / getattr(b, field)
        (said,) = _stated(claim)
        decimals = len(claim.stated.split(".")[1]) if claim.stated and "." in claim.stated else 0
        ok = round(ratio, decimals) == said
        details.append(
            fmt(
                _("{a} {va} / {b} {vb} = {ratio:.2f}×; the article says {said}×"),
                a=a.name,
                va=format_field(field, getattr(a, field)),
                b=b.name,
                vb=format_field(field, getattr(b, field)),
                ratio=ratio,
                said=format_number(said),
            )
        )
        cite(catalog.citation(a.id, field).source.id)
        cite(catalog.citation(b.id, field).source.id)
        verdict = "confirmed" if ok else "corrected"
    elif claim.check == "perf":
        verdict = _check_perf(catalog, claim, details)
        if claim.explanation:
            details.append(fmt(_("Measured: {evidence}"), evidence=claim.explanation))
        cite(claim.source)
    elif claim.check == "mig":
        verdict = _check_mig(catalog, gpus[0], details)
        cite(claim.source)
    elif claim.check == "capacity":
        verdict = _check_capacity(catalog, claim, details)
        cite(claim.source)
        cite("zero-paper")
    else:  # fp32_vs_tensor
        a, b = gpus[0], gpus[1]
        ok = (
            b.cuda_cores is not None
            and a.cuda_cores is not None
            and b.cuda_cores > a.cuda_cores
            and b.fp32_tflops > a.fp32_tflops
            and b.fp16_tensor_dense_tflops < a.fp16_tensor_dense_tflops
        )
        details.append(
            fmt(
                _("{b}: {cb} CUDA cores, {fb} FP32, {tb} FP16 tensor; {a}: {ca}, {fa}, {ta}"),
                a=a.name,
                b=b.name,
                ca=format_field("cuda_cores", a.cuda_cores),
                cb=format_field("cuda_cores", b.cuda_cores),
                fa=format_field("fp32_tflops", a.fp32_tflops),
                fb=format_field("fp32_tflops", b.fp32_tflops),
                ta=format_field("fp16_tensor_dense_tflops", a.fp16_tensor_dense_tflops),
                tb=format_field("fp16_tensor_dense_tflops", b.fp16_tensor_dense_tflops),
            )
        )
        for gpu in (a, b):
            cite(gpu.source)
        verdict = "confirmed" if ok else "corrected"
    return ClaimCheck(claim, verdict, tuple(details), tuple(sources.values()))


def _check_capacity(catalog: Catalog, claim: Claim, details: list[str]) -> Verdict:
    """Run the claim's jobs through the memory estimator: the largest generic transformer
    each GPU holds, against the size the article states."""
    from whichgpu.article.capacity import largest_model
    from whichgpu.inputs.job_input import make_job

    verdicts: list[str] = []
    for row in (c for c in catalog.capacity_claims if c.claim == claim.claim):
        gpu = catalog.gpu(row.gpu)
        job = make_job(
            task=row.task,
            precision=row.precision,
            quant=row.quant,
            optimizer=row.optimizer,
            seq=row.seq,
            batch=row.batch,
            checkpointing=row.checkpointing,
        )
        limit = largest_model(gpu, job)
        stated = row.stated_params
        if row.test == "fits":
            verdicts.append("confirmed" if limit >= stated else "corrected")
        elif row.test == "limit":
            verdicts.append("confirmed" if stated / 2 <= limit <= stated * 2 else "corrected")
        details.append(
            fmt(
                _(
                    "{gpu}, {what} ({seq} tokens, batch {batch}{ckpt}): the largest model that "
                    "fits "
                    "has {limit} parameters; the article's figure is {stated}"
                ),
                gpu=gpu.short_name,
                what=row.note or row.task,
                seq=f"{row.seq:,}",
                batch=row.batch,
                ckpt=_(", checkpointing") if row.checkpointing == "full" else "",
                limit=_billions(limit),
                stated=_billions(stated),
            )
        )
    return _combine(verdicts)


def _check_mig(catalog: Catalog, gpu: GPU, details: list[str]) -> Verdict:
    """C37, computed: one model's decode on a whole card and on its smallest MIG slice
    (1/7 of the SMs, 1/8 of the memory and bandwidth), and seven slices together."""
    from whichgpu.estimate.throughput import estimate_throughput
    from whichgpu.inputs.job_input import make_job
    from whichgpu.models import resolve_model
    from whichgpu.plan import slice_gpu

    smallest = min(
        (p for p in catalog.mig_profiles(gpu.id) if not p.media_extensions),
        key=lambda p: (p.memory_slices, p.compute_slices),
    )
    arch = resolve_model("llama-3.1-8b")
    job = make_job(task="inference", quant="int4", prompt=512, generate=256, all_logits=False)
    whole = estimate_throughput(arch, job, gpu).throughput.value
    part = estimate_throughput(arch, job, slice_gpu(gpu, smallest)).throughput.value
    together = part * smallest.max_instances
    batched = estimate_throughput(
        arch, replace(job, batch=smallest.max_instances), gpu
    ).throughput.value
    details.append(
        fmt(
            _(
                "Llama 3.1 8B (int4), one stream: {whole:,.0f} tokens/s on a whole {gpu}, "
                "{part:,.0f} on one {profile} slice ({share:.0%}); {n} slices serving {n} "
                "streams together: {together:,.0f} tokens/s, where the whole card batching the "
                "same {n} streams serves {batched:,.0f}. MIG buys isolation between services, "
                "not speed: one model runs faster on the whole card."
            ),
            whole=whole,
            gpu=gpu.name,
            part=part,
            profile=smallest.profile,
            share=part / whole,
            n=smallest.max_instances,
            together=together,
            batched=batched,
        )
    )
    return "corrected"


def _check_perf(catalog: Catalog, claim: Claim, details: list[str]) -> Verdict:
    """Run the claim's jobs through the throughput estimator: the ratio of the two GPUs'
    throughput (with the range from the calibration spread) against the article's."""
    from whichgpu.estimate.throughput import estimate_throughput
    from whichgpu.inputs.job_input import make_job
    from whichgpu.models import resolve_model

    verdicts: list[str] = []
    for row in (c for c in catalog.perf_claims if c.claim == claim.claim):
        fields: dict[str, object] = {
            "task": row.task,
            "precision": row.precision,
            "batch": row.batch,
        }
        if row.seq:
            fields["seq"] = row.seq
        if row.prompt:
            fields.update(prompt=row.prompt, generate=row.generate or 1)
        job = make_job(**fields)
        arch = resolve_model(row.model)
        fast = estimate_throughput(arch, job, catalog.gpu(row.gpu), harness=row.harness)
        if row.baseline is None:
            rate = fast.throughput
            inside = row.stated_low <= rate.high and rate.low <= row.stated_high
            verdicts.append("confirmed" if inside else "corrected")
            details.append(
                fmt(
                    _(
                        "{label} on one {gpu}: {value:,.0f} {unit} estimated (likely {low:,.0f}–"
                        "{high:,.0f}); the article: {slow:,.0f}–{shigh:,.0f} ({note})"
                    ),
                    label=row.label,
                    gpu=catalog.gpu(row.gpu).short_name,
                    value=rate.value,
                    unit=rate.unit,
                    low=rate.low,
                    high=rate.high,
                    slow=row.stated_low,
                    shigh=row.stated_high,
                    note=row.note or "",
                )
            )
            continue
        base = estimate_throughput(arch, job, catalog.gpu(row.baseline), harness=row.harness)
        ratio = fast.throughput.value / base.throughput.value
        inside = row.stated_low <= ratio <= row.stated_high
        verdicts.append("confirmed" if inside else "corrected")
        details.append(
            fmt(
                _(
                    "{label}: {gpu} / {base} = {ratio:.2f}× estimated; the article: "
                    "{low:g}–{high:g}×"
                    " ({note})"
                ),
                label=row.label,
                gpu=catalog.gpu(row.gpu).short_name,
                base=catalog.gpu(row.baseline).short_name,
                ratio=ratio,
                low=row.stated_low,
                high=row.stated_high,
                note=row.note or "",
            )
        )
    return _combine(verdicts)


def _billions(n: float) -> str:
    return f"{n / 1e9:.1f} B" if n >= 1e9 else f"{n / 1e6:.0f} M"


def _article_rent(catalog: Catalog, gpu_id: str) -> tuple[float, float] | None:
    rows = [p for p in catalog.listings_for(gpu_id, RENTAL_MARKETS) if p.source == ARTICLE_SOURCE]
    found = price_range(rows)
    return None if found is None else (found.low_usd_per_h, found.high_usd_per_h)


def _combine(verdicts: list[str]) -> Verdict:
    if "corrected" in verdicts:
        return "corrected"
    if "not checkable yet" in verdicts or not verdicts:
        return "not checkable yet"
    return "confirmed"


def check_claims(catalog: Catalog) -> list[ClaimCheck]:
    return [check_claim(catalog, claim) for claim in catalog.claims]
