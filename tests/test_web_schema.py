"""Property tests over the API's OpenAPI document (schemathesis, in-process ASGI): for
generated requests, valid and invalid, no 5xx, and every response is one the document
declares (status code, content type, body schema). Bounded: a few examples per route."""

from __future__ import annotations

import warnings

import pytest

schemathesis = pytest.importorskip("schemathesis")

from hypothesis import HealthCheck, settings  # noqa: E402
from schemathesis.checks import (  # noqa: E402
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from whichgpu.catalog import load_catalog  # noqa: E402
from whichgpu.web import create_app  # noqa: E402

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]

with warnings.catch_warnings():  # schemathesis drives the app through starlette's TestClient
    warnings.simplefilter("ignore")
    schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(load_catalog()))

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.mark.filterwarnings("ignore")
@schema.parametrize()
@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
def test_api_conforms_to_its_schema(case: schemathesis.Case) -> None:
    case.call_and_validate(checks=CHECKS)
