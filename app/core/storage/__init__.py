"""The shared store for data sets, models and batch prediction results: one small interface, a
directory or an object store behind it.

Everything a worker reads (uploaded data sets) or writes (models, batch predictions) goes through
a :class:`Store` addressed by keys such as ``datasets/<uuid>/manifest.json`` (a data set's
shards, app/services/datasets/shards.py), ``models/<uuid>.npz`` and ``predictions/<uuid>.<output>.npy``
(the database holds the keys). Keys are write-once: every key holds a fresh uuid, and writing an
existing key is refused, so a copy of an object is never stale. ``PGS_STORE_URL`` picks the store
(:func:`local.open_store`): empty, the data dir (:class:`LocalDirStore`; with several hosts a volume
every API process and worker mounts at the same path), or an fsspec URL such as
``s3://bucket/prefix`` (object_store.py), which hosts share without a shared file system.
"""
