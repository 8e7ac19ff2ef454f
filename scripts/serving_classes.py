"""The serving page's tables of runs kept out of every fit, by class (the held-out file and
the gathered one): a run's row, its class, each class's errors, and how often the range a
served estimate states holds the measurement. Shared by ``scripts/gen_docs.py``'s sections."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from accuracy.published_serving import ServingCheck


def serving_row(run: ServingCheck, row: dict[str, str], metric: str) -> str:
    """One run's row of a serving table: where it ran, its lengths, ``metric`` (with what
    the table puts before it), what whichgpu estimates, what was published, the error."""
    where = f"{run.gpus} × {row['gpu']}" + (f" (TP {run.tp})" if run.tp > 1 else "")
    head = (f"| {run.id} | {run.kind} | {run.engine} | {row['model']} | {where} | "
            f"{row['prompt']}/{row['generate']} | {metric} |")  # fmt: skip
    if run.excluded or run.error is None:
        return f"{head} not estimated: {run.excluded} | {run.measured:,.4g} | |"
    return f"{head} {run.estimated:,.4g} | {run.measured:,.4g} | {run.error:+.0%} |"


def class_of(run: ServingCheck, row: dict[str, str]) -> list[str]:
    """The classes a run counts in: AMD (every metric), and by model kind, metric, engine,
    load and prompt length; a run on an engine release of its own (``vllm@0.7``: the early
    builds whose DeepSeek kernels no model times, only a range holds) apart from the runs on
    today's, whose errors are the model's."""
    from whichgpu.models import resolve_model

    moe = "MoE" if resolve_model(row["model"]).is_moe else "dense"
    engines = "TensorRT-LLM" if run.engine == "trtllm" else "vLLM and SGLang"
    out = ["AMD Instinct (ROCm builds), all metrics"] if row["gpu"].startswith("mi") else []
    if run.metric.endswith("tokens_per_s"):
        name = f"{moe}, throughput at maximum load or 8 to 256 users, {engines}"
        if row.get("dataset") == "sharegpt":  # a burst's length tail, not a steady state
            name += ", ShareGPT bursts"
    elif run.metric == "tpot_s":
        name = f"{moe}, TPOT at 1 to 256 users"
    else:
        name = f"{moe}, TTFT at 1 to 10 users"
        if int(row["prompt"]) >= 2000:
            name += ", prompts of 2,000 tokens or more"
    release = ", an early release (vllm@0.7, sglang@0.4.3)" if "@" in run.engine else ""
    return [f"{name}{release}" for name in (*out, name)]


def table(path: Path) -> tuple[list[str], list[ServingCheck]]:
    """Every run of the CSV at ``path`` planned and compared (its table's rows), then its
    class table, and the runs."""
    from accuracy.published_runs import spread
    from accuracy.published_serving import check_serving

    rows = {r["id"]: r for r in csv.DictReader(path.open(encoding="utf-8"))}
    runs = check_serving(path.read_text("utf-8"))
    lines = [
        "| run | kind | engine | model | GPUs | in/out | users | metric | estimated | "
        "published | error |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    classes: dict[str, list[float]] = {}
    for run in runs:
        row = rows[run.id]
        rate = row.get("rate_rps")
        users = row.get("concurrency") or (f"{rate} req/s" if rate else "all")
        lines.append(serving_row(run, row, f"{users} | {run.metric}"))
        if run.excluded or run.error is None:
            continue
        for name in class_of(run, row):
            classes.setdefault(name, []).append(run.error)
    lines += ["", "| class | runs | median abs. error | 90th percentile |", "|---|---|---|---|"]
    for name, errors in sorted(classes.items()):
        median, p90 = spread(errors)
        lines.append(f"| {name} | {len(errors)} | {median:.0%} | {p90:.0%} |")
    return lines, runs


def coverage(runs: list[ServingCheck], which: str) -> str:
    """How often the range a served estimate states holds the published figure, throughputs
    and latencies apart, and how wide it is."""
    from whichgpu.estimate.efficiency_model import load_efficiency, load_framework_spreads
    from whichgpu.estimate.latency_range import latency_band

    low, high = load_efficiency()[1]["llm-serve"]  # the range a served estimate states
    planned = [r for r in runs if r.error is not None]
    latencies = [r for r in planned if r.metric in ("ttft_s", "tpot_s")]
    rates = [r for r in planned if r not in latencies]

    def own(r: ServingCheck) -> tuple[float, float]:
        if r.metric in ("ttft_s", "tpot_s"):
            return latency_band(r.metric.removesuffix("_s"))
        return 1 / (1 + high), 1 / (1 + low)

    def width(band: tuple[float, float]) -> float:
        return band[1] - band[0]

    wide = [r for r in planned if width(r.band) > width(own(r)) + 1e-9]
    widths = sorted(width(r.band) for r in planned)
    ttft, tpot = latency_band("ttft"), latency_band("tpot")
    vllm = load_framework_spreads()["vllm"]
    from whichgpu.estimate.assumptions import BUFFER_SPREAD_GIB

    return (
        f"A served estimate states the serving regime's likely range (the measurement "
        f"{1 / (1 + high) - 1:+.0%} to {1 / (1 + low) - 1:+.0%} of the estimate, from the "
        f"fit's held-out errors), its time per output token the same range inverted "
        f"({tpot[0] - 1:+.0%} to {tpot[1] - 1:+.0%}) and its time to first token the prefill "
        f"fit's ({ttft[0] - 1:+.0%} to {ttft[1] - 1:+.0%}); each widened where it rests on a "
        f"factor no serving run measured (a mixture of experts on an engine whose own runs hold "
        f"none or none as fine, an architecture with no serving run) by how far a regime's own "
        f"factor has sat from a shared one; a rate on an engine whose host time is fitted on "
        f"its own maximum-load runs within those runs' leave-one-source-out errors where "
        f"they are wider (`framework_efficiency.csv`: vLLM's put the measurement "
        f"{1 / (1 + vllm[1]) - 1:+.0%} to {1 / (1 + vllm[0]) - 1:+.0%} of the estimate at their "
        f"10th and 90th percentiles); and at its fast end, for an engine that carries "
        f"TensorRT-LLM's fitted overhead a step (vLLM, SGLang: their own runs fit a host time "
        f"a sequence at maximum load, never a light-load step), by that overhead; and a rate "
        f"whose batch is what the KV pool holds at both ends by as many sequences as "
        f"{BUFFER_SPREAD_GIB:g} GiB a GPU holds, how far a release's own buffers may sit from "
        f"the ones counted (`kv_pool.pool_band`: TensorRT-LLM v0.14 and v0.20 served Llama "
        f"3.1 70B FP8 on one H100 at 410 and 742 tokens/s) "
        f"(`latency_range.rate_band`, `ServingPlan.likely_s`; {len(wide)} of these "
        f"{len(planned)} rows widened): it "
        f"holds {sum(bool(r.inside) for r in rates)} of these {len(rates)} {which} throughputs "
        f"and {sum(bool(r.inside) for r in latencies)} of their {len(latencies)} latencies "
        f"(median width {widths[len(widths) // 2]:.0%} of the estimate)."
    )


def gathered_section(root: Path) -> list[str]:
    """Serving runs gathered from sources neither the fits nor the held-out file use
    (``validation/published_serving_gathered.csv``): mixture-of-experts models on vLLM and
    SGLang's 2026 builds, gpt-oss in its MXFP4 checkpoint, AMD, TensorRT-LLM's Blackwell
    NVFP4 tables, with the dense runs of the same sources beside them."""
    lines, runs = table(root / "validation" / "published_serving_gathered.csv")
    from whichgpu.estimate.efficiency_model import load_framework_spreads
    from whichgpu.estimate.routed_experts import ROUTED_FACTOR

    low, high = load_framework_spreads()[f"{ROUTED_FACTOR}:trtllm"]
    return [
        "## Gathered: 2026 builds, gpt-oss in MXFP4, AMD, Blackwell NVFP4",
        "",
        "`validation/published_serving_gathered.csv`: runs from sources outside the "
        "calibration and the held-out file (`validation/gathered/moe_serving_runs.csv` holds "
        "what a helper copied from each, with its quote; rows whose metric, engine or GPU the "
        "source leaves unclear are not planned): vLLM's FP8 KV-cache post (v0.19.1, H100: "
        "Llama 3.1 8B beside gpt-oss-20b at 20,000 in and 2,000 out), SemiAnalysis "
        "InferenceX's DeepSeek-R1 on SGLang 0.5.7 (8 × H200) and gpt-oss-120b on vLLM 0.17 "
        "ROCm (MI300X); TensorRT-LLM's post-v1.0 performance overview's dense Llama 3.3 70B "
        "rows (@03e27c7, RTX PRO 6000 Blackwell); and, gathered in 2026-12 to test the routed "
        "experts' law on other engines (g202-g208), vLLM's MoE runs in two pull requests "
        "(#44220: Qwen3-30B-A3B on 2 × H200; #23696: gpt-oss-120b on 8 × B200) and SGLang's "
        "cookbook at 100 users (Qwen3 235B, DeepSeek-R1 and gpt-oss-120b on 8 × B200, Llama 4 "
        "Scout and Maverick on 8 × MI300X). No fit reads them. The same TensorRT-LLM page's "
        "30 MoE rows (DeepSeek-R1, Qwen3 235B and 30B, Llama 4 Maverick on B200, GB200 and "
        "the RTX PRO 6000 in NVFP4, Maverick on 8 × H200 in FP8) moved to "
        "`validation/published_serving.csv` in 2026-12 (ids m101-m130): TensorRT-LLM's "
        "routed experts' law is fitted on them and on v0.17's eight Mixtral 8x7B rows "
        "(`whichgpu.estimate.routed_experts`: η_r = min(1, η₀ (S/S₀)^b) in an expert's GEMM "
        f"size S, each of the five models left out in turn reading {low:+.0%} to {high:+.0%} at "
        "the law the other four fit); the page's H100 and H200 rows of DeepSeek-R1 and "
        "Qwen3 235B stay in the held-out file, so that source is not new to it.",
        "",
        *lines,
        "",
        coverage(runs, "gathered"),
    ]


def early_section(root: Path) -> list[str]:
    """Published runs of DeepSeek-V3 and R1 on the engine builds of early 2025
    (``validation/published_serving_early.csv``), whose kernels whichgpu does not model:
    what they measured, how far today's kernels read from them, the range the releases of
    those builds state from them (:func:`accuracy.published_serving.early_build_spread`),
    that range tested leaving each source out and on the held-out file's runs of such
    builds, and why."""
    import statistics

    from accuracy.published_serving import check_serving, early_build_spread

    path = root / "validation" / "published_serving_early.csv"
    lines, runs = table(path)
    text = path.read_text("utf-8")
    rows = {r["id"]: r for r in csv.DictReader(text.splitlines())}
    planned = [r for r in runs if r.error is not None]
    median = statistics.median(abs(r.error) for r in planned if r.error is not None)
    gathered = root / "validation" / "published_serving_gathered.csv"
    now = {r["id"]: r for r in csv.DictReader(gathered.read_text("utf-8").splitlines())}
    low, high, n = early_build_spread(text)

    def ms(table_rows: dict[str, dict[str, str]], run: str) -> str:
        return f"{float(table_rows[run]['value']) * 1e3:,.1f} ms"

    def slower(run: ServingCheck) -> float:  # how many times slower than estimated
        error = run.error or 0.0
        return 1 + error if run.metric.endswith("tokens_per_s") else 1 / (1 + error)

    # each source's runs against the range the other sources' runs give
    header = text.splitlines()[0]
    held = 0
    sources = sorted({r["source"] for r in rows.values()})
    body = text.splitlines()[1:]
    for source in sources:
        kept = [line for line in body if rows[line.split(",", 1)[0]]["source"] != source]
        others = "\n".join([header, *kept])
        _low, top, _n = early_build_spread(others)
        held += sum(slower(r) <= 1 + top for r in planned if rows[r.id]["source"] == source)
    heldout = root / "validation" / "published_serving_heldout.csv"
    judged = [r for r in check_serving(heldout.read_text("utf-8")) if r.error is not None]
    later = [r for r in judged if "@" in r.engine]
    # the source most of the range rests on, left out: how slow the range would reach, and
    # how many of the held-out early-build runs it would hold
    main = max(sources, key=lambda s: sum(r["source"] == s for r in rows.values()))
    kept = [line for line in body if rows[line.split(",", 1)[0]]["source"] != main]
    _low, top, _n = early_build_spread("\n".join([header, *kept]))
    still = sum(slower(r) <= 1 + top for r in later)
    # dstack's runs of TensorRT-LLM's 0.17 development build, planned at today's release
    trt = [r for r in judged if r.engine == "trtllm" and "dstack" in r.source]
    trt_out = sum(not r.inside for r in trt)
    return [
        "## Early 2025 builds of DeepSeek-V3 and R1: their range, not their kernels",
        "",
        "`validation/published_serving_early.csv`: DeepSeek-V3 and R1 on the engine builds of "
        "their first months, from sources outside the calibration and the held-out file "
        "(`validation/gathered/early_deepseek_runs.csv` holds all 51 rows a helper read, each "
        "with its quote): DataCrunch's SGLang v0.4.1 on 8 × H200 with data-parallel attention "
        "at 1 to 8 requests a second, their SGLang of 2025-01-31 at one request "
        "(`bench_one_batch`), and vLLM's main of 2025-02-25 offline at 3,000 tokens in and "
        "1,000 out (pull request #13747, two MLA backends). These builds ran the model several "
        f"times slower than today's: SGLang v0.4.1 decoded at {ms(rows, 'e02')} a token at one "
        f"request a second, SGLang 0.5.7 at {ms(now, 'c029')} with 8 users in flight (c029, "
        f"gathered); timed at today's kernels, the estimates read {median:.0%} off these runs "
        "at the median. The sources say why: the V0 engine of vLLM 0.7.1 to 0.7.3 turned "
        "chunked prefill and prefix caching off for MLA (its log: 'MLA is enabled; forcing "
        "chunked prefill and prefix caching to be disabled'), before 0.7.1 it ran MLA as "
        "multi-head attention (Red Hat's post of 2025-02-04: 3.4× the generation throughput "
        "with MLA on 8 × H200), FlashMLA came to vLLM in 0.8.0 and to SGLang in 0.4.4.post2, "
        "SGLang's Triton MLA slowed with the prompt's length "
        "(sgl-project/sglang#3550: FlashInfer's about 4× on 32K prompts), DataCrunch measured "
        "SGLang v0.4.3.post2 at batch 1 at 39, 229 and 285 tokens/s without CUDA graphs, with "
        "them and with torch.compile, and the fused MoE and block-FP8 GEMM kernels were "
        "untuned (`validation/gathered/early_deepseek_runs.md` cites each).",
        "",
        "Each build's DeepSeek runs come from one or two sources, too few to fit a model of "
        "its kernels and test it on a source left out, so none is modelled. What the runs do "
        "give is a range: the releases of those builds, `--engine vllm@0.7` (0.7.3, and "
        "`vllm@0.6`) and `--engine sglang@0.4.3` (0.4.3.post2), time a DeepSeek-class (MLA) "
        f"model at today's kernels, say so, and state a range to as slow as these {n} runs "
        f"read: they ran {1 + low:.1f} to {1 + high:.1f} times slower than the estimate "
        "(their 10th and 90th percentiles, `accuracy.published_serving.early_build_spread`; "
        "`estimate.efficiency_model.early_build_band`), and the range runs from the serving "
        f"fit's fast end to {1 + high:.1f} times slower; capacity against a request rate is "
        "held at the slow end, as for any factor nobody measured. Each source's runs against "
        f"the range the other sources' give: {held} of {len(planned)} inside; DataCrunch's "
        "SGLang v0.4.1 ran DeepSeek-V3 slower than any other source's early build. The test "
        "that counts is the held-out file: dstack's DeepSeek-R1 runs on vLLM 0.7.3.dev and "
        "0.7.4.dev, and SGLang 0.4.2.post4 and 0.4.3.post2 (8 × H200 and 8 × MI300X, 3,200 "
        "tokens in and 800 out, 4, 32 and 128 users), planned at the release each ran: "
        f"{sum(bool(r.inside) for r in later)} of {len(later)} inside. That rests on one "
        f"source most: without its runs the range would reach {1 + top:.1f} times slower, "
        f"and {still} of the {len(later)} would stay inside. Some of these builds already ran "
        "FlashMLA's decode (dstack's vLLM 0.7.4.dev, the pull request's second backend): "
        "what the range stands for is the builds of those months, not one kernel. "
        "TensorRT-LLM has no such release: its first to serve DeepSeek-V3/R1 is 0.19.0 "
        "(0.17.0's PyTorch workflow lists Llama, Mixtral, QWen and Vila), and dstack's "
        f"{len(trt)} runs of a 0.17 development build are planned at today's release, where "
        f"{trt_out} stay outside.",
        "",
        *lines,
        "",
    ]
