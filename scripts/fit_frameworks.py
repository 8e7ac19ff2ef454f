"""Fit each framework's speed factor on the published runs it has from several sources
(validation/published_training.csv; accuracy.published_runs.fit_factors), each
serving engine's host time per sequence in a decode step on its published maximum-load runs
(validation/published_serving.csv; accuracy.published_serving.fit_sequence_times;
TensorRT-LLM, on whose runs the roofline is fitted, has none), a served MoE's routed
experts' efficiency law on each engine's MoE ones
(accuracy.published_serving.fit_routed_efficiency), the early engine builds' error range on
DeepSeek-class models (validation/published_serving_early.csv;
accuracy.published_serving.early_build_spread),
and write
catalog/data/framework_efficiency.csv.

    python scripts/fit_frameworks.py          # write it
    python scripts/fit_frameworks.py --check  # exit 1 if it is stale (make test)
"""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

from numcheck import check

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the accuracy harness (accuracy/: not installed with whichgpu)
IMAGE_RUNS = ROOT / "validation" / "published_diffusion_training.csv"
SERVING_RUNS = ROOT / "validation" / "published_serving.csv"
EARLY_RUNS = ROOT / "validation" / "published_serving_early.csv"
OUT = ROOT / "src" / "whichgpu" / "catalog" / "data" / "framework_efficiency.csv"


def table() -> str:
    from accuracy.published_runs import fit_factors, validation_runs

    runs = validation_runs(ROOT)
    factors = fit_factors(runs)
    lines = ["kind,key,regime,value,unit,fitted_on"]
    for framework, (factor, n) in factors.items():
        lines.append(f"factor,{framework},llm-train,{factor:.6f},x,{n}")
    # FP8 training over BF16, from the runs that measure one layout in both
    from accuracy.published_runs import fit_fp8_factor
    from whichgpu.estimate.efficiency_model import FP8_TRAIN_FACTOR, load_framework_factors

    fp8 = fit_fp8_factor(runs, load_framework_factors().get(FP8_TRAIN_FACTOR, (1.0, 0))[0])
    if fp8 is not None:
        lines.append(f"factor,{FP8_TRAIN_FACTOR},llm-train,{fp8[0]:.6f},x,{fp8[1]}")
    # an architecture no LLM training run of the efficiency fit measured: its factor on
    # the published LLM runs on it (accuracy.published_runs.fit_architecture_factors)
    from accuracy.published_runs import fit_architecture_factors
    from whichgpu.estimate.efficiency import TRAIN_FAMILY, TRAIN_REFERENCE
    from whichgpu.estimate.efficiency_model import load_efficiency

    model, _spread = load_efficiency()
    fitted = {k.removeprefix(TRAIN_FAMILY) for k in model.factor if k.startswith(TRAIN_FAMILY)}
    inherited = frozenset({r.architecture for r in runs} - fitted - {TRAIN_REFERENCE, ""})
    held = load_framework_factors()
    current = {a: held[TRAIN_FAMILY + a][0] for a in inherited if TRAIN_FAMILY + a in held}
    for arch, (factor, n, low, high) in fit_architecture_factors(runs, current, inherited).items():
        key = TRAIN_FAMILY + arch
        lines.append(f"factor,{key},llm-train,{factor:.6f},x,{n}")
        lines.append(f"spread_low,{key},llm-train,{low:.6f},error,")
        lines.append(f"spread_high,{key},llm-train,{high:.6f},error,")
    from accuracy.published_serving import fit_sequence_times

    times = fit_sequence_times(SERVING_RUNS.read_text(encoding="utf-8"))
    for engine, (seconds, runs, low, high) in times.items():
        lines.append(f"overhead,{engine},llm-serve,{seconds:.9f},s/sequence,{runs}")
        lines.append(f"spread_low,{engine},llm-serve,{low:.6f},error,")
        lines.append(f"spread_high,{engine},llm-serve,{high:.6f},error,")
    # a served MoE's routed experts' GEMMs at their own efficiency, a law in the expert's
    # GEMM size fitted on each engine's own MoE runs (whichgpu.estimate.routed_experts)
    from accuracy.published_serving import fit_routed_efficiency
    from whichgpu.estimate.routed_experts import ROUTED_FACTOR, ROUTED_SLOPE
    from whichgpu.job.engine_times import family

    text = SERVING_RUNS.read_text(encoding="utf-8")
    for engine in sorted({family(row["engine"]) for row in csv.DictReader(io.StringIO(text))}):
        routed = fit_routed_efficiency(text, engine)
        if routed is None:
            continue
        eta0, slope, n, low, high = routed
        lines.append(f"factor,{ROUTED_FACTOR}:{engine},llm-serve,{eta0:.6f},x,{n}")
        lines.append(f"factor,{ROUTED_SLOPE}:{engine},llm-serve,{slope:.6f},x,{n}")
        lines.append(f"spread_low,{ROUTED_FACTOR}:{engine},llm-serve,{low:.6f},error,")
        lines.append(f"spread_high,{ROUTED_FACTOR}:{engine},llm-serve,{high:.6f},error,")
    # an engine release whose MLA kernels predate every measured build: the range its
    # DeepSeek-class estimates state is the early builds' published errors
    from accuracy.published_serving import early_build_spread
    from whichgpu.estimate.efficiency_model import EARLY_MLA_KEY

    low, high, n = early_build_spread(EARLY_RUNS.read_text(encoding="utf-8"))
    lines.append(f"spread_low,{EARLY_MLA_KEY},llm-serve,{low:.6f},error,{n}")
    lines.append(f"spread_high,{EARLY_MLA_KEY},llm-serve,{high:.6f},error,{n}")
    # fine-tuning an image pipeline: one factor over the published runs' steps a second
    # (their trainers: diffusers scripts, SimpleTuner, kohya's sd-scripts), against the
    # estimate without it
    from whichgpu.catalog import load_catalog
    from whichgpu.estimate.imaging import IMAGE_TRAIN_FACTOR, published_training_runs, speed_factor

    runs = published_training_runs(IMAGE_RUNS.read_text(encoding="utf-8"), load_catalog())
    factor, n = speed_factor(runs)
    lines.append(f"factor,{IMAGE_TRAIN_FACTOR},diffusion-train,{factor:.6f},x,{n}")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    text = table()
    if "--check" in argv:
        if problem := check(OUT, text):
            print(f"stale: {problem}; run 'make docs'", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
