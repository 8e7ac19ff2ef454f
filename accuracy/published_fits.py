"""Published fits and out-of-memory verdicts (``validation/published_fits.csv``): each run's
setup planned by ``whichgpu fit`` on its GPU, and the verdict and peak compared with what
the source reports (a peak in GiB, converted where the source gave GB)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass


@dataclass(frozen=True)
class FitCheck:
    """One published verdict against ``fit``'s: whether it fits, and the memory each says."""

    id: str
    model: str
    task: str
    gpu: str
    published: str
    fits: bool
    needed_gib: float
    capacity_gib: float
    peak_gib: float | None
    source: str
    #: whichgpu's figure of what the source's peak measured (tensors, or the total)
    compared_gib: float = 0.0

    @property
    def agrees(self) -> bool:
        return self.fits == (self.published == "fits")

    @property
    def peak_error(self) -> float | None:
        """``fit``'s figure over the published peak, less 1 (where a peak is published)."""
        return None if self.peak_gib is None else self.compared_gib / self.peak_gib - 1


def check_fits(text: str) -> list[FitCheck]:
    """Every row of ``text`` (the CSV) planned by ``fit`` on its GPU, its settings as the
    run stated them (the recomputation, micro-batch, optimizer and adapters; a framework's
    recipe for what it leaves unstated)."""
    from whichgpu.catalog import load_catalog
    from whichgpu.commands.fit import fit_request
    from whichgpu.inputs.requests import FitRequest
    from whichgpu.models import resolve_model

    catalog = load_catalog()
    out = []
    for row in csv.DictReader(io.StringIO(text)):
        fields: dict[str, object] = {
            "model": row["model"], "task": row["task"], "gpu": row["gpu"],
            "batch": int(row["batch"]), "seq": int(row["seq"]), "precision": row["precision"],
            "recompute": row["checkpointing"], "attention": row["attention"],
        }  # fmt: skip
        optional = {
            "framework": row["framework"], "quant": row["quant"], "optimizer": row["optimizer"],
            "lora_targets": row["lora_targets"],
        }  # fmt: skip
        fields.update({k: v for k, v in optional.items() if v})
        if row["lora_rank"]:
            fields["lora_rank"] = int(row["lora_rank"])
        for flag, field in (("optimizer_in_backward", "optimizer_in_backward"),
                            ("compile", "compiled")):  # fmt: skip
            if row[flag]:
                fields[field] = row[flag] == "true"
        request = FitRequest(**fields)  # type: ignore[arg-type]
        result, _serving = fit_request(catalog, resolve_model(row["model"]), request)
        target = next(g for g in result.gpus if g.gpu.id == result.target.id)  # type: ignore[union-attr]
        tensors = result.estimate.tensor_bytes / 2**30
        out.append(
            FitCheck(
                row["id"], row["model"], row["task"], row["gpu"], row["verdict"], target.fits,
                target.needed_gib, target.needed_gib + target.headroom_gib,
                float(row["peak_gib"]) if row["peak_gib"] else None, row["source"],
                tensors if row.get("peak_kind") == "allocated" else target.needed_gib,
            )
        )  # fmt: skip
    return out
