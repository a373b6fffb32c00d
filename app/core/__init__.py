"""Cross-cutting pieces of the service: settings, database, errors, auth and the no-keys rules,
request limits, the HTTP server's options, metrics, files, the store, and the background loop
every long-running service is built on."""
