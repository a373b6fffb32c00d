"""The metrics a data scientist reads, computed a shard at a time over a model's evaluation rows
(a job's test split or test set, a batch prediction's labelled rows), equal to scikit-learn's
``sklearn.metrics`` on the same predictions.

:mod:`.names` lists them; :mod:`.classification` and :mod:`.regression` accumulate them shard by
shard; :mod:`.threshold` is a binary classifier's decision threshold; :mod:`.evaluation` runs a
model over ShardedMatrix rows into them.
"""
