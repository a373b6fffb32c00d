"""The solver catalogue (``/v1/solvers``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
)

# -- the solver catalogue ------------------------------------------------------------------------


class SolverParamRange(BaseModel):
    min: float = Field(description="Lower bound")
    max: float = Field(description="Upper bound")
    min_inclusive: bool
    max_inclusive: bool


class SolverParamRead(BaseModel):
    name: str
    type: Literal["number", "integer", "boolean", "string", "array", "object"] = Field(
        description="JSON type of its values (besides null and the choices); object: a mapping "
        "(class_weight: label to weight)"
    )
    nullable: bool = Field(description="Whether null is accepted (the description says what it means)")
    default: Any = Field(description="The value when params leaves it out")
    range: SolverParamRange | None = Field(
        description="Interval of its numbers: the solver's own, within the service's bounds"
    )
    choices: list[str] | None = Field(
        description="The strings it accepts: all its values, or keywords beside its numbers"
    )
    description: str


class SolverTaskRead(BaseModel):
    task: Literal["classification", "regression"] = Field(
        description="classification: binary and multiclass data sets"
    )
    estimator: str = Field(description="The estimator class that trains it")
    losses: list[str] = Field(description="The values of params.loss")
    params: list[SolverParamRead] = Field(description="Everything a job's params may set")


class SolverRead(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "name": "gcd",
                    "title": "Greedy coordinate descent, L1-regularised",
                    "paper": "Shalev-Shwartz, Tewari: Stochastic Methods for l1-regularized Loss "
                    "Minimization (JMLR 2011)",
                    "algorithm": "Section 4.2 (baseline)",
                    "streams": False,
                    "warm_starts": True,
                    "tasks": [
                        {
                            "task": "classification",
                            "estimator": "GCDClassifier",
                            "losses": ["logistic", "smooth_hinge", "squared", "squared_hinge"],
                            "params": [
                                {
                                    "name": "sigma",
                                    "type": "number",
                                    "nullable": False,
                                    "default": 1e-5,
                                    "range": {
                                        "min": 0.0,
                                        "max": 1e12,
                                        "min_inclusive": False,
                                        "max_inclusive": True,
                                    },
                                    "choices": None,
                                    "description": "Regularisation weight.",
                                }
                            ],
                        },
                    ],
                }
            ]
        },
    )

    name: str = Field(description="The value of a job's solver")
    title: str
    paper: str = Field(description="The paper it implements")
    algorithm: str = Field(description="Where in the paper")
    streams: bool = Field(
        description="Whether it trains from a data set's shards one at a time, so on data larger "
        "than a worker's memory budget (PGS_WORKER_MEMORY_BYTES)"
    )
    warm_starts: bool = Field(
        description="Whether a job of this solver may start from a stored model's weights (init_model)",
    )
    tasks: list[SolverTaskRead] = Field(description="Per task it trains: its losses and parameters")


class SolverList(BaseModel):
    solvers: list[SolverRead]
