"""Plain functions behind the routes: parsing, storage, job state transitions, prediction."""
