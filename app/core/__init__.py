"""Cross-cutting pieces of the service: settings, database, errors, auth, metrics, files, the
store, and the background loop every long-running service is built on."""
