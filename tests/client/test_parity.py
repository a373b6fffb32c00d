"""Parity of the client and the ``pgs`` command with the API: a walk over the service's OpenAPI
document finds, for every operation, a client method and a command that perform it (each names
its operations with ``pgs_client.operations.covers``), and no name that matches no operation."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import typer
from fastapi import FastAPI
from pgs_client import Client
from pgs_client.cli.app import app as cli
from pgs_client.operations import PLUMBING, operations_of

from app.main import create_app
from tests.helpers import make_settings

HTTP_METHODS = {"get", "put", "post", "delete", "patch", "head", "options"}


def api_operations(api: FastAPI) -> set[str]:
    """Every operation of the OpenAPI document, as ``"METHOD /path"``."""
    paths = api.openapi()["paths"]
    return {
        f"{method.upper()} {path}"
        for path, item in paths.items()
        for method in item
        if method in HTTP_METHODS
    }


def client_operations() -> set[str]:
    """What the client's methods name: the Client's own and each resource's."""
    with Client("http://127.0.0.1:9") as client:
        holders = [client, *(v for v in vars(client).values() if not _is_transport(v))]
        return {
            operation
            for holder in holders
            for _, method in inspect.getmembers(type(holder), inspect.isfunction)
            for operation in operations_of(method)
        }


def _is_transport(value: Any) -> bool:
    return type(value).__module__.startswith("pgs_client.transport")


def cli_operations(group: typer.Typer = cli) -> set[str]:
    """What the commands name, in every group and subgroup."""
    found = {op for info in group.registered_commands for op in operations_of(info.callback)}
    for sub in group.registered_groups:
        assert sub.typer_instance is not None
        found |= cli_operations(sub.typer_instance)
    return found


def uncovered(api: FastAPI) -> dict[str, set[str]]:
    """The operations without a client method, and those without a command."""
    wanted = api_operations(api) - set(PLUMBING)
    return {"client": wanted - client_operations(), "cli": wanted - cli_operations()}


def _api(tmp_path: Path) -> FastAPI:
    return create_app(make_settings(tmp_path))


def test_every_operation_has_a_client_method_and_a_command(tmp_path: Path):
    api = _api(tmp_path)
    assert len(api_operations(api)) >= 53
    assert uncovered(api) == {"client": set(), "cli": set()}


def test_every_name_is_an_operation_of_the_api(tmp_path: Path):
    """A renamed route or a typo in ``covers`` would otherwise cover nothing unnoticed."""
    operations = api_operations(_api(tmp_path))
    assert client_operations() - operations == set()
    assert cli_operations() - operations == set()
    assert set(PLUMBING) <= operations


def test_a_new_route_without_a_method_and_a_command_is_found(tmp_path: Path):
    api = _api(tmp_path)

    @api.get("/v1/things/{thing_id}")
    def get_thing(thing_id: int) -> dict[str, int]:
        return {"id": thing_id}

    assert uncovered(api) == {"client": {"GET /v1/things/{thing_id}"}, "cli": {"GET /v1/things/{thing_id}"}}
