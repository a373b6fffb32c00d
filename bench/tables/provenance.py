"""What every record says about its run: command, commit, machine, load and duration."""

from __future__ import annotations


def provenance(record: dict) -> str:
    """Command, commit, date, machine, load and duration of one record, as one paragraph."""
    m = record["machine"]
    versions = ", ".join(
        f"{lib} {m[lib]}" for lib in ("numpy", "scipy", "numba", "scikit-learn") if m.get(lib)
    )
    commit = f"commit `{record['commit']}`" + (" with uncommitted changes" if record.get("dirty") else "")
    load = record.get("load_average") or {}
    loads = [f"{load[k][0]:.1f} at the {k}" for k in ("start", "end") if load.get(k)]
    parts = [
        f"`{record['command']}`",
        f"{commit}, {record['started_at'][:10]}",
        f"{m['cpus']} CPUs ({m['cpu_model']}), {m['memory_gib']} GiB, Python {m['python']}, {versions}",
    ]
    if loads:
        parts.append("load average " + " and ".join(loads))
    if record.get("wall_seconds"):
        parts.append(f"{record['wall_seconds'] / 60:.1f} min")
    text = "Command: " + "; ".join(parts) + "."
    if record.get("note"):
        text += " " + record["note"]
    return text
