"""Plain functions behind the routes and the workers, one package per domain: ``datasets``,
``jobs``, ``model_registry`` and ``studies``; beside them what several domains share: the solver
catalogue as the API sees it (``solvers``), ``Idempotency-Key`` (``idempotency``), and figures
(``plots``). Services never import routes."""
