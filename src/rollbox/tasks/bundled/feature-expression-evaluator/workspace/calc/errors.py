"""The one error type of the calc package."""


class CalcError(Exception):
    """Raised for any invalid expression or failed evaluation."""

    def __init__(self, message: str, pos: int | None = None):
        super().__init__(message if pos is None else f"{message} at position {pos}")
        self.pos = pos
