"""Training jobs on the API side: the rules of a request and its limits, state transitions, leases
between processes, the rows a job reads, its preprocessing, and its thinned trace."""
