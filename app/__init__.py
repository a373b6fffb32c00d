"""The PGS training-and-inference service (FastAPI); uses :mod:`solver` as a library.

Nothing is imported here on purpose: worker processes import :mod:`app.training.worker` and must not pay for
FastAPI, and ``python -m app`` must be able to set up the environment before anything heavy loads.
"""
