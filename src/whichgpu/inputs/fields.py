"""How GPU fields are shown: a label and a unit for each, in the article's table order."""

from __future__ import annotations

from whichgpu.i18n import N_, _, fmt, format_decimal

#: field -> (label, unit). Labels are translated when rendered.
FIELDS: dict[str, tuple[str, str]] = {
    "architecture": (N_("Architecture"), ""),
    "chip": (N_("Chip"), ""),
    "compute_capability": (N_("Compute capability"), ""),
    "cuda_cores": (N_("CUDA cores"), ""),
    "tensor_cores": (N_("Tensor cores"), ""),
    "tensor_core_gen": (N_("Tensor core generation"), ""),
    "rt_cores": (N_("RT cores"), ""),
    "rt_core_gen": (N_("RT core generation"), ""),
    "memory_gib": (N_("VRAM"), "GB"),
    "reported_memory_mib": (N_("Memory the driver reports"), "MiB"),
    "memory_type": (N_("Memory type"), ""),
    "memory_bandwidth_gb_per_s": (N_("Memory bandwidth"), "GB/s"),
    "fp32_tflops": (N_("FP32"), "TFLOPS"),
    "fp16_tensor_dense_tflops": (N_("FP16 tensor, dense (FP32 accumulate)"), "TFLOPS"),
    "fp16_fp16acc_tensor_dense_tflops": (N_("FP16 tensor, dense (FP16 accumulate)"), "TFLOPS"),
    "bf16_tensor_dense_tflops": (N_("BF16 tensor, dense"), "TFLOPS"),
    "tf32_tensor_dense_tflops": (N_("TF32 tensor, dense"), "TFLOPS"),
    "fp8_tensor_dense_tflops": (N_("FP8 tensor, dense"), "TFLOPS"),
    "fp4_tensor_dense_tflops": (N_("FP4 tensor, dense"), "TFLOPS"),
    "int8_tensor_dense_tops": (N_("INT8 tensor, dense"), "TOPS"),
    "vendor_fp16_tensor_tflops": (N_("Vendor's FP16 tensor headline"), "TFLOPS"),
    "vendor_fp16_tensor_basis": (N_("Vendor headline basis"), ""),
    "fp64_tflops": (N_("FP64"), "TFLOPS"),
    "fp64_tensor_tflops": (N_("FP64 tensor"), "TFLOPS"),
    "tdp_w": (N_("TDP"), "W"),
    "nvlink_gb_per_s": (N_("NVLink"), "GB/s"),
    "nvlink_domain_gpus": (N_("NVLink domain (GPUs, over nodes)"), ""),
    "mig_max_instances": (N_("MIG instances (max)"), ""),
    "ecc": (N_("ECC memory"), ""),
    "display_outputs": (N_("Display outputs"), ""),
    "display_connectors": (N_("Display connectors"), ""),
    "nvenc": (N_("Video encoders (NVENC)"), ""),
    "nvdec": (N_("Video decoders (NVDEC)"), ""),
    "vendor": (N_("Vendor (software stack)"), ""),
    "pcie_gen": (N_("PCIe generation"), ""),
    "form_factor": (N_("Form factor"), ""),
    "launch_year": (N_("Launch year"), ""),
    "name": (N_("Name"), ""),
}

#: Dense tensor rates: a figure twice as large is the vendor's 2:4-sparsity figure.
DENSE_TENSOR_FIELDS = frozenset(
    {
        "tf32_tensor_dense_tflops",
        "fp16_tensor_dense_tflops",
        "fp16_fp16acc_tensor_dense_tflops",
        "bf16_tensor_dense_tflops",
        "fp8_tensor_dense_tflops",
        "fp4_tensor_dense_tflops",
        "int8_tensor_dense_tops",
    }
)


def format_number(value: float) -> str:
    """``2039.0`` → ``2,039``; ``0.605`` → ``0.605``; ``112.5`` → ``112.5`` (in the current
    language's notation: ``2 039``, ``0,605`` in French)."""
    if float(value).is_integer():
        return format_decimal(int(value))
    return format_decimal(round(value, 3))


def format_field(field: str, value: object) -> str:
    """A GPU field's value with its unit, as a reader expects it (``"2,039 GB/s"``)."""
    from whichgpu.i18n import _

    if value is None:
        return _("n/a") if field != "ecc" else _("not documented")
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    if field == "launch_year":
        return str(value)
    if isinstance(value, int | float):
        unit = FIELDS.get(field, ("", ""))[1]
        text = format_number(value)
        return f"{text} {unit}" if unit else text
    if field == "vendor_fp16_tensor_basis":  # a word (dense, sparse), not a name
        return _(str(value))
    return str(value)


def format_usd(value: float) -> str:
    """``1.2345`` → ``$1.23``; ``15000`` → ``$15,000`` (``1,23 $`` in French)."""
    return fmt(_("${amount}"), amount=format_decimal(value, 2 if value < 100 else 0))


def format_usd_range(low: float, high: float) -> str:
    """``$0.96–2.29``, or one price when both ends agree."""
    if format_usd(low) == format_usd(high):
        return format_usd(low)
    low_text = format_decimal(low, 2 if low < 100 else 0)
    high_text = format_decimal(high, 2 if high < 100 else 0)
    return fmt(_("${low}–{high}"), low=low_text, high=high_text)


def format_duration(seconds: float | None) -> str:
    """Seconds as the unit a person reads best: s, min, h or days ("—" when unknown)."""
    if seconds is None:
        return "—"
    if seconds < 120:
        return fmt(_("{n:.1f} s"), n=seconds)
    if seconds < 2 * 3600:
        return fmt(_("{n:.1f} min"), n=seconds / 60)
    if seconds < 3 * 86400:
        return fmt(_("{n:.1f} h"), n=seconds / 3600)
    return fmt(_("{n:.1f} days"), n=seconds / 86400)


#: Short units for narrow table cells.
SHORT_UNITS = {
    "tokens/s": "tok/s",
    "samples/min": "smp/min",
    "images/s": "img/s",
    "sequences/s": "seq/s",
    "tflops": "TFLOPS",
}


def format_rate(value: float | None, unit: str | None = None) -> str:
    """A throughput for a table cell: ``8,888 tok/s``; ``0.44 TFLOPS`` ("—" when unknown)."""
    if value is None:
        return "—"
    short = SHORT_UNITS.get(unit or "", unit or "")
    if value >= 100:
        return f"{format_decimal(round(value), 0)} {short}"
    digits = max(0, 1 - int(f"{value:e}".split("e")[1]))
    return f"{format_decimal(round(value, digits), digits)} {short}"


def format_cost(value: float | None) -> str:
    """A price or cost for a table cell ("—" when unknown)."""
    return "—" if value is None else format_usd(value)
