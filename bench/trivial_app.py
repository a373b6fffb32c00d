"""The floor for bench/predict_bench.py: a FastAPI endpoint that parses the same JSON body and
answers a constant, served by the same uvicorn. Whatever the service adds on top is its cost."""

from __future__ import annotations

import json

from fastapi import FastAPI, Request, Response

app = FastAPI()


@app.post("/predict")
async def predict(request: Request) -> Response:
    body = json.loads(await request.body())
    n = len(body["instances"])
    return Response(json.dumps({"predictions": [0] * n}), media_type="application/json")
