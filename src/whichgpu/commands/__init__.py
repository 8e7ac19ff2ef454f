"""The commands as library calls, one module a verb, each a loop over :func:`whichgpu.plan.plan`:
``fit`` (one job × every GPU), ``estimate`` (one job × one hardware), ``recommend`` (the
enumeration of hardware × offers, ranked), ``mig``, ``compare``, ``export``."""
