"""Backup and restore of an installation: the SQLite database and the files its rows reference
(data set shards, model files, batch prediction results, unfinished uploads), taken while the
service runs (make.py), checked and put back into a fresh installation (restore.py)."""
