"""What ``whichgpu mig`` and ``POST /api/v1/mig`` take: the services to place on MIG
instances and where to plan them, declared once as :mod:`whichgpu.inputs.requests`'s
request types are (the CLI's options, the services files and the API's schema)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from whichgpu.i18n import N_
from whichgpu.inputs import Input, given
from whichgpu.inputs.request_fields import (
    BATCH,
    DEFAULT_MARKETS,
    GENERATE,
    GPU_NAME,
    MARKET_NAMES,
    MODEL,
    PARAMS,
    PRECISION,
    PROMPT,
    QUANT,
)

#: Isolated instances a MIG plan places at most, over all its services (585 GPUs of 7):
#: the packer's work is bounded by it (docs/web.md, "Limits").
MAX_MIG_REPLICAS = 4096
MAX_PROFILES = 8


@dataclass(frozen=True)
class ServiceRequest:
    """An inference service to place on MIG instances (a ``[[services]]`` table): a model
    (its memory from the estimator) or the memory a replica needs."""

    name: str | None = given(None, Input("text", N_("The service's name.")))
    model: str | None = given(None, replace(MODEL, help=N_("A service's model preset.")))
    params: str | None = given(None, replace(PARAMS, help=N_("Or a generic size: 7B.")))
    memory_gib: float | None = given(
        None,
        Input(
            "number", N_("Or the memory a replica needs, GiB."), low=1e-3, high=1e6, flag="memory"
        ),
    )
    precision: str | None = given(None, replace(PRECISION, help=N_("16-true, bf16-true…")))
    quant: str | None = given(None, QUANT)
    batch: int | None = given(None, replace(BATCH, help=N_("Concurrent sequences.")))
    prompt: int | None = given(None, replace(PROMPT, help=N_("Prompt tokens.")))
    generate: int | None = given(None, replace(GENERATE, help=N_("Generated tokens.")))
    replicas: int = given(1, Input("int", N_("Isolated copies of the service."), low=1, high=1000))
    profile: str | None = given(
        None, Input("text", N_("A MIG profile to use: 3g.40gb."), max_length=40)
    )


@dataclass(frozen=True)
class MigOptions:
    """Where to plan: one MIG GPU (or all), a profile mix to check, the markets to price."""

    gpu: str | None = given(None, replace(GPU_NAME, help=N_("Plan on this MIG GPU only.")))
    profiles: tuple[str, ...] | None = given(
        None,
        Input(
            "list",
            N_("Check a mix of profiles on one --gpu: 1g.10gb,2g.20gb,3g.40gb."),
            high=MAX_PROFILES,
            max_length=40,
        ),
    )
    markets: tuple[str, ...] = given(
        DEFAULT_MARKETS, replace(MARKET_NAMES, help=N_("Markets to price in."))
    )
