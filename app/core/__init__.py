"""Cross-cutting pieces of the service: settings, database, errors, auth, metrics, files."""
