"""The training pipeline: the runner hands job ids to an executor (a local process pool or a Dask
cluster); in the worker, ``worker.run_job`` runs the steps of ``steps`` top to bottom, from the
job's rows to its stored model."""
