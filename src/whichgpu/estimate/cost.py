"""Cost: renting by the hour, buying (the card plus its electricity), and the break-even
between them. Pure arithmetic over the catalog's prices; units are in the names.

* Rent: ``cost = price_usd_per_h × gpus × hours`` (cloud list prices are per GPU-hour once an
  instance's price is divided by its GPU count, as ``prices.csv`` stores them).
* Buy: the cards spread over their useful life (``amortize_months`` of ``hours_per_month``,
  straight-line depreciation; 36 months by default, the usual life of computer equipment)
  plus electricity at the card's TDP (an upper bound: NVIDIA's TDP/TBP is the board's
  sustained power limit), per hour; a job costs its hours of that. The whole outlay
  (``purchase + energy``), amortised over its life by :func:`ownership_usd_per_h`.
* Break-even: months after which owning is cheaper than renting the same GPUs,
  ``purchase / ((rent_usd_per_h − power_usd_per_h) × hours_per_month)`` (no resale value, no
  host, cooling or staff: stated in every answer that uses it).
"""

from __future__ import annotations

#: U.S. average retail price of electricity, residential sector, January 2024: 15.45 ¢/kWh
#: (EIA, Electricity Monthly Update, "Retail Service by Customer Sector", released
#: 2024-03-26). Users pass their own with ``--electricity``.
DEFAULT_ELECTRICITY_USD_PER_KWH = 0.1545
DEFAULT_ELECTRICITY_SOURCE = "eia-electricity-monthly-2024-01"


def rent_cost_usd(price_usd_per_h: float, gpus: int, hours: float) -> float:
    return price_usd_per_h * gpus * hours


def power_usd_per_h(tdp_w: float, gpus: int, electricity_usd_per_kwh: float) -> float:
    """Electricity per hour for ``gpus`` cards drawing their TDP."""
    return tdp_w / 1000.0 * gpus * electricity_usd_per_kwh


#: Months a bought GPU is written off over (straight-line), by default.
DEFAULT_AMORTIZE_MONTHS = 36.0


def ownership_usd_per_h(
    purchase_usd_total: float, power_usd_per_h: float, amortize_months: float,
    hours_per_month: float,
) -> float:  # fmt: skip
    """An owned GPU's cost per hour of use: its price over ``amortize_months`` of
    ``hours_per_month`` hours, plus its electricity."""
    return purchase_usd_total / (amortize_months * hours_per_month) + power_usd_per_h


def break_even_months(
    purchase_usd_total: float, rent_usd_per_h: float, own_usd_per_h: float, hours_per_month: float
) -> float | None:
    """Months of use at ``hours_per_month`` after which buying costs less than renting;
    None when renting costs no more per hour than the electricity of owning."""
    saved_per_month = (rent_usd_per_h - own_usd_per_h) * hours_per_month
    if saved_per_month <= 0:
        return None
    return purchase_usd_total / saved_per_month
