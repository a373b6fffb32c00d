"""``pgs datasets columns``: a data set's schema and statistics, column by column."""

from __future__ import annotations

from itertools import islice
from typing import Annotated, Any

import typer

from pgs_client.cli import output
from pgs_client.cli.context import DatasetId, Json, client
from pgs_client.operations import covers

COLUMNS = ["index", "name", "kind", "count", "missing", "mean", "std", "min", "max", "categories"]


def _row(column: Any) -> dict[str, Any]:
    """A column for the table; a text column's most frequent categories with their counts."""
    top = column.top_categories or []
    categories = ", ".join(f"{c.value or '(empty)'} {c.count}" for c in top)
    return {
        **output.plain(column),
        "categories": categories + (", ..." if column.categories_truncated else ""),
    }


@covers("GET /v1/datasets/{dataset_id}/columns")
def datasets_columns(
    ctx: typer.Context,
    dataset_id: DatasetId,
    limit: Annotated[int, typer.Option(help="At most this many, in column order.")] = 100,
    as_json: Json = False,
) -> None:
    """A data set's columns: name, kind, missing count, mean, spread; a text column's categories."""
    columns = list(islice(client(ctx).datasets.columns(dataset_id, page_size=min(limit, 1000)), limit))
    output.show(columns if as_json else [_row(c) for c in columns], as_json, COLUMNS, f"dataset {dataset_id}")
