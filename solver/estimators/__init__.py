"""The scikit-learn estimators, one module per solver family, all on ``base.LinearModelBase``."""

from .base import LinearModelBase
from .gradient_descent import (
    GDClassifier,
    GDRegressor,
    OGDClassifier,
    OGDRegressor,
    SGDClassifier,
    SGDRegressor,
)
from .kernel_pgs import KernelPGSClassifier, KernelPGSRegressor
from .l1 import (
    GCDClassifier,
    GCDRegressor,
    SCDClassifier,
    SCDRegressor,
    SMIDASClassifier,
    SMIDASRegressor,
    TruncGradClassifier,
    TruncGradRegressor,
)
from .lbfgs import LBFGSClassifier, LBFGSRegressor
from .pgs import PGSClassifier, PGSRegressor
from .sdca import SDCAClassifier, SDCARegressor

__all__ = [
    "GCDClassifier",
    "GCDRegressor",
    "GDClassifier",
    "GDRegressor",
    "KernelPGSClassifier",
    "KernelPGSRegressor",
    "LBFGSClassifier",
    "LBFGSRegressor",
    "LinearModelBase",
    "OGDClassifier",
    "OGDRegressor",
    "PGSClassifier",
    "PGSRegressor",
    "SCDClassifier",
    "SDCAClassifier",
    "SDCARegressor",
    "SCDRegressor",
    "SGDClassifier",
    "SGDRegressor",
    "SMIDASClassifier",
    "SMIDASRegressor",
    "TruncGradClassifier",
    "TruncGradRegressor",
]
