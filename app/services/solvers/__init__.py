"""The solvers as the service sees them, from the catalogue ``solver.SOLVERS``: a job's estimator,
its ``params`` checked against the solver's own parameter declarations (estimators.py); the listing
of ``GET /v1/solvers`` (catalogue.py); each solver's ``params`` as a schema of the OpenAPI document
(params_schema.py); all within the service's bounds on numbers (bounds.py).

Adding a solver is one entry in ``solver/catalogue.py``; nothing here changes. ``solver`` is
imported on first use, so importing the web app does not load Numba.
"""
