"""The database: engines and sessions (``engine``), the tables (``tables``), and the migrations that
build and change them (``migrations/``). The database is the source of truth for metadata and job
state; arrays live in the store (``app.core.storage``)."""
