"""Plain functions behind the routes and the workers: request rules, parsing (in a child process
with limits), storage, job state transitions and leases, studies, prediction."""
