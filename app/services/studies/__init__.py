"""Time-to-accuracy studies: the rules of a request, the fan-out into ordinary jobs, what a study
adds inside the worker, and the state derived from its jobs."""
