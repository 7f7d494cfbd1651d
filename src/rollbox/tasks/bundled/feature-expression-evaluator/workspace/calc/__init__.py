"""A small, safe arithmetic expression evaluator."""

from calc.errors import CalcError
from calc.evaluator import FUNCTIONS, evaluate

__all__ = ["CalcError", "FUNCTIONS", "evaluate"]
