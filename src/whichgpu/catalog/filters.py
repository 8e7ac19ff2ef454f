"""Catalog filters for ``whichgpu gpus``: minimum VRAM, architecture, capability features."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from whichgpu.catalog.names import normalize
from whichgpu.catalog.records import GPU
from whichgpu.catalog.store import Catalog
from whichgpu.errors import InvalidInput, UnknownName
from whichgpu.i18n import _

#: "FP64-capable" (``--requires fp64``): FP64 at a quarter of the FP32 rate or better. Data
#: centre chips run 1:2 (A100, H100), workstation and consumer chips 1:32 or 1:64
#: (RTX A6000 0.6 of 38.7 TFLOPS: gpus.csv), so any ratio between separates them.
FP64_CAPABLE_RATIO = 0.25

FEATURES: dict[str, Callable[[GPU], bool]] = {
    "mig": lambda g: g.mig_max_instances > 0,
    "nvlink": lambda g: g.nvlink_gb_per_s > 0,
    "rt": lambda g: g.rt_cores > 0,
    # double precision at 1/4 of FP32 or better: the HPC parts (GA100, GH100, GV100, B200,
    # CDNA) run 1:2; GA10x and Ada run 1:64, Turing 1:32
    "fp64": lambda g: g.fp64_tflops >= FP64_CAPABLE_RATIO * g.fp32_tflops,
    "display": lambda g: g.display_outputs > 0,
    "ecc": lambda g: g.ecc is True,
    # video work: a hardware encoder (NVENC; the A100, H100, H200 and B200 have none) and
    # decoders; a GPU whose engine count no source gives does not count as having them
    "nvenc": lambda g: (g.nvenc or 0) > 0,
    "nvdec": lambda g: (g.nvdec or 0) > 0,
    # CUDA-only software (TensorRT-LLM, most custom kernels) needs an NVIDIA GPU
    "cuda": lambda g: g.cuda,
}


#: The largest memory filter accepted (the API's bound on ``min_vram``): far above any GPU.
MAX_MEMORY_FILTER = 1e6


def filter_gpus(
    catalog: Catalog,
    min_memory_gib: float | None = None,
    architecture: str | None = None,
    features: Sequence[str] = (),
) -> list[GPU]:
    """The catalog's GPUs that meet every given condition, in catalog order."""
    if min_memory_gib is not None and not 0 <= min_memory_gib <= MAX_MEMORY_FILTER:
        # NaN fails both comparisons: refused with the range, not matched by nothing
        raise InvalidInput(
            "out_of_range", field=("min_vram",), low=0, high=MAX_MEMORY_FILTER, value=min_memory_gib
        )
    for feature in features:
        if feature not in FEATURES:
            raise InvalidInput(
                "unknown_feature", field=("feature",), name=feature, valid=", ".join(FEATURES)
            )
    gpus = list(catalog.gpus)
    if architecture is not None:
        known = {normalize(g.architecture): g.architecture for g in gpus}
        key = normalize(architecture)
        matches = [name for norm, name in known.items() if norm.startswith(key)] if key else []
        if len(matches) != 1:
            from whichgpu.catalog.names import suggestions

            names = sorted(known.values())
            close = suggestions(architecture, names) or tuple(names)  # else every valid one
            raise UnknownName(_("architecture"), architecture, tuple(matches) or close)
        gpus = [g for g in gpus if g.architecture == matches[0]]
    if min_memory_gib is not None:
        gpus = [g for g in gpus if g.memory_gib >= min_memory_gib]
    return [g for g in gpus if all(FEATURES[f](g) for f in features)]
