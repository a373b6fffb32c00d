"""Pydantic request and response models of the HTTP API (XCreate / XRead / XPatch), one module per
resource as in ``app/api/routes/``, and ``common`` for the field types they share."""
