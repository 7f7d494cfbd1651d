"""Errors raised by the codecs."""


class CodecError(ValueError):
    """Raised when text cannot be encoded or data cannot be decoded."""

    def __init__(self, message: str, position: int | None = None):
        super().__init__(message if position is None else f"{message} (at {position})")
        self.position = position
