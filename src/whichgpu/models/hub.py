"""Opt-in: fetch a model's ``config.json`` from the Hugging Face Hub (``--hub ORG/NAME``).

Only the config file is downloaded, with a timeout; never weights, never code
(``trust_remote_code`` is not a thing here: the file is parsed as JSON data).
"""

from __future__ import annotations

import os

from whichgpu.errors import InvalidInput
from whichgpu.models.arch import ModelArch

TIMEOUT_S = 10


def fetch_config_text(repo_id: str, timeout_s: int = TIMEOUT_S) -> str:
    """The text of ``repo_id``'s config.json, downloaded into the Hub's cache, read from
    there as a user's file is (:func:`~whichgpu.files.read_text`: a regular file, at most
    :data:`~whichgpu.catalog.userdata.MAX_FILE_BYTES`); any failure is one line."""
    os.environ.setdefault("HF_HUB_DOWNLOAD_TIMEOUT", str(timeout_s))
    os.environ.setdefault("HF_HUB_ETAG_TIMEOUT", str(timeout_s))
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        raise InvalidInput("hub_missing", field=("hub",)) from None
    try:
        path = hf_hub_download(repo_id=repo_id, filename="config.json")
    except Exception as error:  # network, authentication, missing repo: one line
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise InvalidInput("hub_fetch", field=("hub",), repo=repo_id, reason=reason) from None
    from whichgpu.catalog.userdata import MAX_FILE_BYTES
    from whichgpu.files import read_text

    return read_text(path, MAX_FILE_BYTES)


def hub_arch(repo_id: str) -> ModelArch:
    """The model of ``repo_id``'s config.json on the Hub (:func:`fetch_config_text`)."""
    from whichgpu.models import arch_from_config_text

    return arch_from_config_text(fetch_config_text(repo_id), f"hf://{repo_id}")
