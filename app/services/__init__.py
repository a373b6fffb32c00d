"""Plain functions behind the routes and the workers: request rules, parsing, storage, job state
transitions and leases, studies, prediction."""
