"""The shape of every ``pgs`` command, read from the typer app itself (nothing runs): JSON for
scripts wherever an API object is printed, a model named by id or ``name@alias`` everywhere and
the other objects by id, and a flag for every field of the request bodies the commands send
(jobs, uploads, imports; a study's body is its spec file), so that the command line keeps up
with the API as fields are added."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Iterator
from typing import Any

import typer
from pgs_client import Client
from pgs_client.cli.app import app
from pydantic import BaseModel

from app.api.routes.uploads import ImportRequest
from app.schemas.jobs import JobCreate
from app.schemas.studies import StudyCreate
from app.services.datasets.create import DatasetOptions

# The commands without --json, each because it prints no API object.
WITHOUT_JSON = {
    "pgs metrics": "prints the service's Prometheus text as it is",
    "pgs datasets rm": "deletes; one line on stderr",
    "pgs jobs plot": "writes a figure to a file",
    "pgs models export": "writes the model to a file",
    "pgs models rm": "deletes; one line on stderr",
    "pgs studies plot": "writes a figure to a file",
    "pgs aliases rm": "deletes; one line on stderr",
    "pgs batches rm": "deletes; one line on stderr",
    "pgs batches result": "writes the result to a file",
    "pgs uploads rm": "deletes; one line on stderr",
}
# Parameter names of the commands, by what they name: a model is an id or name@alias (the
# service resolves both in every path), the other objects are ids.
MODEL_PARAMETERS = {"model", "model_id", "init_model"}
ID_PARAMETERS = {"dataset", "dataset_id", "test_dataset", "job_id", "study_id", "batch"}

# `pgs jobs create`: the flag of each JobCreate field whose flag is not its name with hyphens.
# The fields of a nested object (selection, threshold, the targets' metric form) are walked one
# by one; preprocessing is one JSON object, its fields inside it.
JOB_FLAGS = {
    "dataset_id": "--dataset",
    "test_dataset_id": "--test-dataset",
    # The solver's parameters, one NAME=VALUE each (--sigma, --early-stopping, --class-weight
    # are shorthands for some of them).
    "params": "--param",
    "targets": "--target",
    "targets.values": "--target",
    "targets.metric": "--target-metric",
    "time_budget_s": "--time-budget",
    "tags": "--tag",
    # One flag: a number is threshold.value, a metric's name threshold.metric.
    "threshold.value": "--threshold",
    "threshold.metric": "--threshold",
    "threshold.validation_fraction": "--threshold-validation-fraction",
    "preprocessing": "--preprocessing",
}
WHOLE_OBJECTS = {"preprocessing"}
# An import's body: DatasetOptions and the source, the command's argument.
IMPORT_FLAGS = {"source": "SOURCE", "tags": "--tag"}
# A study's body is the spec file: each field goes to Client.studies.create, under this
# parameter name where it is not the field's own.
STUDY_PARAMETERS = {"dataset_id": "dataset", "test_dataset_id": "test_dataset"}


def commands(group: typer.Typer = app, path: str = "pgs") -> Iterator[tuple[str, Callable[..., Any]]]:
    """(``pgs datasets upload``, its function) for every command of every group."""
    for info in group.registered_commands:
        assert info.callback is not None
        yield f"{path} {info.name or info.callback.__name__.replace('_', '-')}", info.callback
    for sub in group.registered_groups:
        assert sub.typer_instance is not None and sub.name is not None
        yield from commands(sub.typer_instance, f"{path} {sub.name}")


def flags(path: str) -> set[str]:
    """The option names (``--json``) and argument names (``SOURCE``) of a command."""
    command: Any = typer.main.get_command(app)
    for name in path.split()[1:]:
        command = command.commands[name]
    return {
        name
        for param in command.params
        for name in (
            [*param.opts, *param.secondary_opts]
            if param.param_type_name == "option"
            else [str(param.metavar or param.name.upper())]
        )
    }


def fields(model: type[BaseModel], renamed: dict[str, str], prefix: str = "") -> dict[str, str]:
    """Each field of ``model`` (a nested object's fields as ``outer.inner``), with the flag it
    should have: ``renamed``'s, else its name with hyphens."""
    found = {}
    for name, field in model.model_fields.items():
        path = prefix + name
        nested = [
            kind
            for kind in typing.get_args(field.annotation) or [field.annotation]
            if isinstance(kind, type) and issubclass(kind, BaseModel)
        ]
        if nested and path not in WHOLE_OBJECTS:
            for kind in nested:
                found |= fields(kind, renamed, f"{path}.")
            if path not in renamed:
                continue
        found[path] = renamed.get(path, "--" + name.replace("_", "-"))
    return found


def _base_type(hint: Any) -> Any:
    """``str`` from ``Annotated[str | None, ...]``."""
    if typing.get_origin(hint) is typing.Annotated:
        hint = typing.get_args(hint)[0]
    kinds = [k for k in typing.get_args(hint) if k is not type(None)]
    return kinds[0] if len(kinds) == 1 else hint


def test_every_command_that_shows_an_api_object_has_json():
    paths = [path for path, _ in commands()]
    assert len(paths) >= 45
    missing = sorted(p for p in paths if "--json" not in flags(p) and p not in WITHOUT_JSON)
    assert missing == [], "give these commands --json, or say in WITHOUT_JSON why they print no object"
    assert set(WITHOUT_JSON) <= set(paths)
    assert [p for p in WITHOUT_JSON if "--json" in flags(p)] == []


def test_a_model_is_an_id_or_name_at_alias_and_other_objects_are_ids():
    seen = {"model": 0, "id": 0}
    for path, callback in commands():
        hints = typing.get_type_hints(inspect.unwrap(callback), include_extras=True)
        for name, hint in hints.items():
            if name in MODEL_PARAMETERS:
                assert _base_type(hint) is str, f"{path} {name}: give it ModelArg (id or name@alias)"
                seen["model"] += 1
            elif name in ID_PARAMETERS:
                assert _base_type(hint) is int, f"{path} {name}"
                seen["id"] += 1
    assert seen["model"] >= 12 and seen["id"] >= 15


def test_every_job_body_field_has_a_jobs_create_flag():
    wanted = fields(JobCreate, JOB_FLAGS)
    assert {"selection.grid", "threshold.validation_fraction", "model_name"} <= set(wanted)
    assert set(JOB_FLAGS) <= set(wanted), "a JOB_FLAGS entry names no field of JobCreate"
    have = flags("pgs jobs create")
    assert {path: flag for path, flag in wanted.items() if flag not in have} == {}


def test_every_upload_and_import_field_has_a_flag():
    upload = fields(DatasetOptions, {})
    assert {"zero_based", "na_values", "tags"} <= set(upload)
    have = flags("pgs datasets upload")
    assert {path: flag for path, flag in upload.items() if flag not in have} == {}
    imported = fields(ImportRequest, IMPORT_FLAGS)
    have = flags("pgs datasets import")
    assert {path: flag for path, flag in imported.items() if flag not in have} == {}


def test_every_study_body_field_goes_from_the_spec_file_to_the_client():
    parameters = inspect.signature(Client("http://127.0.0.1:9").studies.create).parameters
    wanted = {STUDY_PARAMETERS.get(name, name) for name in StudyCreate.model_fields}
    assert {"select_sigma", "seed", "runs"} <= wanted
    assert wanted - set(parameters) == set()
