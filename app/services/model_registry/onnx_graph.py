"""A linear model and its preprocessing as one ONNX graph, which onnxruntime serves anywhere.

The preprocessing (scikit-learn transformers) is converted by skl2onnx, the converter its
maintainers keep in step with scikit-learn; the linear decision is the service's own
(:func:`app.services.model_registry.predict.predict`) written with ``onnx.helper``: scores
``X W^T + b``, the label by the score's side of the model's decision threshold (binary; 0 by default) or
argmax (one-vs-rest), probabilities by sigmoid or softmax for logistic models. Inputs ``X``: raw
features, float32 ``[N, n_features]`` (a text column's place is not read) and, for a model with
text columns, ``text``: their values, strings ``[N, n_text_columns]``; outputs ``scores``
(float64), ``label`` (a class, or the prediction of a regressor) and, for logistic models,
``probabilities``.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from app.services.metrics.threshold import Threshold
from app.services.model_registry.artifacts import LoadedModel

OPSET = 17
ML_OPSET = 3


class NotExportable(ValueError):
    """The model has a part ONNX export does not cover (a 422 that says which)."""


def to_onnx(model: LoadedModel) -> bytes:
    import onnx
    from onnx import helper

    est = model.estimator
    if not hasattr(est, "coef_"):
        raise NotExportable(
            f"{type(est).__name__} is not linear (a kernel expansion): export it as npz or json"
        )
    graph = _preprocessing_graph(model)
    coef = np.atleast_2d(np.asarray(est.coef_, dtype=np.float64))
    nodes, inits, outputs = _decision(model, coef, np.atleast_1d(est.intercept_), "features")
    graph.node.extend(nodes)
    graph.initializer.extend(inits)
    graph.output.extend(outputs)
    onnx_model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("ai.onnx.ml", ML_OPSET)]
    )
    onnx_model.producer_name = "pgs-service"
    onnx.checker.check_model(onnx_model)
    return bytes(onnx_model.SerializeToString())


def _preprocessing_graph(model: LoadedModel) -> Any:
    """A graph from the inputs to ``features`` (float64, no outputs yet): ``X`` (float32, every
    raw column) and, for a model with text columns, ``text`` (strings, its text columns in
    order). The numeric columns are gathered from X and go through the converted numeric part
    (imputation, scaling), the text ones through the converted one-hot encoder; as in the
    ColumnTransformer, numeric features come first."""
    from onnx import TensorProto, helper, numpy_helper

    from solver.preprocessing import numeric_columns  # the solver loads Numba: not at import

    prep = model.preprocessing
    numeric = (
        np.arange(model.n_features)
        if prep is None
        else np.arange(model.n_features)[
            numeric_columns(model.n_features, prep["categorical"], prep["ignore"])
        ]
    )
    categorical = [] if prep is None else list(prep["categorical"])
    inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, model.n_features])]
    nodes = [helper.make_node("Gather", ["X", "numeric_columns"], ["numeric_raw"], axis=1)]
    inits = [numpy_helper.from_array(np.asarray(numeric, dtype=np.int64), "numeric_columns")]
    parts = ["numeric_raw"]
    if model.preprocessor is not None:
        numeric_part = model.preprocessor.named_transformers_["numeric"]
        if numeric_part != "passthrough":
            parts = [_embed(numeric_part, "numeric_raw", "numeric_", len(numeric), nodes, inits)]
    if categorical:
        inputs.append(helper.make_tensor_value_info("text", TensorProto.STRING, [None, len(categorical)]))
        encoder = model.preprocessor.named_transformers_["categorical"]
        parts.append(_embed(encoder, "text", "text_", len(categorical), nodes, inits))
    casts = []
    for k, part in enumerate(parts):
        nodes.append(helper.make_node("Cast", [part], [f"part_{k}"], to=TensorProto.DOUBLE))
        casts.append(f"part_{k}")
    nodes.append(helper.make_node("Concat", casts, ["features"], axis=1))
    return helper.make_graph(nodes, "pgs-model", inputs, [], initializer=inits)


def _embed(part: Any, source: str, prefix: str, width: int, nodes: list[Any], inits: list[Any]) -> str:
    """Convert a fitted scikit-learn ``part`` with skl2onnx, rename its graph under ``prefix``,
    feed it from ``source`` and add its nodes; returns its output's name."""
    from onnx import compose, helper
    from skl2onnx import convert_sklearn
    from skl2onnx.common.data_types import FloatTensorType, StringTensorType

    kind = StringTensorType if source == "text" else FloatTensorType
    _register_solver_transformers()
    converted = convert_sklearn(
        part, initial_types=[("input", kind([None, width]))], target_opset={"": OPSET, "ai.onnx.ml": ML_OPSET}
    )
    graph = compose.add_prefix(converted, prefix).graph
    nodes.append(helper.make_node("Identity", [source], [graph.input[0].name]))
    nodes.extend(graph.node)
    inits.extend(graph.initializer)
    return str(graph.output[0].name)


@functools.cache
def _register_solver_transformers() -> None:
    """skl2onnx converts by a transformer's exact class: the solver's ``OnePassMaxAbsScaler``
    (a ``MaxAbsScaler`` fitted faster, with the same attributes) takes MaxAbsScaler's converter."""
    from skl2onnx import update_registered_converter
    from skl2onnx.operator_converters.scaler_op import convert_sklearn_scaler
    from skl2onnx.shape_calculators.scaler import calculate_sklearn_scaler_output_shapes

    from solver.preprocessing import OnePassMaxAbsScaler

    update_registered_converter(
        OnePassMaxAbsScaler,
        "SklearnMaxAbsScaler",
        calculate_sklearn_scaler_output_shapes,
        convert_sklearn_scaler,
        options={"div": ["std", "div", "div_cast"]},
    )  # MaxAbsScaler's


def _decision(
    model: LoadedModel, coef: np.ndarray, intercept: np.ndarray, features: str
) -> tuple[list[Any], list[Any], list[Any]]:
    from onnx import TensorProto, helper, numpy_helper

    k = coef.shape[0]
    inits = [
        numpy_helper.from_array(coef.T.copy(), "coef_t"),
        numpy_helper.from_array(intercept.astype(np.float64), "intercept"),
        numpy_helper.from_array(np.asarray([1], dtype=np.int64), "axis_1"),
        # A binary classifier's decision threshold, on its score (0 by default), as /predict's.
        numpy_helper.from_array(
            np.asarray(Threshold.from_dict(model.threshold, model.has_proba).decision_value), "cut"
        ),
    ]
    nodes = [
        helper.make_node("MatMul", [features, "coef_t"], ["z"]),
        helper.make_node("Add", ["z", "intercept"], ["scores"]),
    ]
    outputs = [helper.make_tensor_value_info("scores", TensorProto.DOUBLE, [None, k])]
    if model.task == "regression" or model.classes is None:
        nodes.append(helper.make_node("Squeeze", ["scores", "axis_1"], ["label"]))
        outputs.append(helper.make_tensor_value_info("label", TensorProto.DOUBLE, [None]))
        return nodes, inits, outputs
    classes, class_type = _classes_tensor(model.classes)
    inits.append(classes)
    if k == 1:  # binary: the one score above the decision threshold
        nodes += [
            helper.make_node("Greater", ["scores", "cut"], ["positive"]),
            helper.make_node("Cast", ["positive"], ["code_2d"], to=TensorProto.INT64),
            helper.make_node("Squeeze", ["code_2d", "axis_1"], ["code"]),
        ]
    else:  # one-vs-rest: the class of the largest score
        nodes.append(helper.make_node("ArgMax", ["scores"], ["code"], axis=1, keepdims=0))
    nodes.append(helper.make_node("Gather", ["classes", "code"], ["label"], axis=0))
    outputs.append(helper.make_tensor_value_info("label", class_type, [None]))
    if model.has_proba:
        if k == 1:
            inits.append(numpy_helper.from_array(np.asarray(1.0), "one"))
            nodes += [
                helper.make_node("Sigmoid", ["scores"], ["p_pos"]),
                helper.make_node("Sub", ["one", "p_pos"], ["p_neg"]),
                helper.make_node("Concat", ["p_neg", "p_pos"], ["probabilities"], axis=1),
            ]
        else:
            nodes.append(helper.make_node("Softmax", ["scores"], ["probabilities"], axis=1))
        outputs.append(
            helper.make_tensor_value_info("probabilities", TensorProto.DOUBLE, [None, len(model.classes)])
        )
    return nodes, inits, outputs


def _classes_tensor(classes: np.ndarray) -> tuple[Any, int]:
    from onnx import TensorProto, helper, numpy_helper

    values = classes.tolist()
    if all(isinstance(v, str) for v in values):
        return helper.make_tensor(
            "classes", TensorProto.STRING, [len(values)], [v.encode() for v in values]
        ), TensorProto.STRING
    if all(isinstance(v, int) for v in values):
        return numpy_helper.from_array(np.asarray(values, dtype=np.int64), "classes"), TensorProto.INT64
    return numpy_helper.from_array(np.asarray(values, dtype=np.float64), "classes"), TensorProto.DOUBLE
