"""The offline accuracy harness: published runs and measurements, whichgpu's estimates of
each, and the fits drawn from them (``scripts/fit_frameworks.py``, ``scripts/gen_docs.py``).
Not part of the installed package: nothing in ``whichgpu`` imports it."""
