"""Trained models: their files and in-memory cache, names, versions and aliases, predictions
(one request or a batch over a stored data set), and export and import (npz, JSON, ONNX)."""
