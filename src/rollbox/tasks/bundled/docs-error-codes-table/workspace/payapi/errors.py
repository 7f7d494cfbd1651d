"""Errors returned by the Payments API.

Every error a client can receive is a subclass of ApiError that sets its own ``code``.
Class attributes not set on a class are inherited from its parent.
"""


class ApiError(Exception):
    """Base class of all API errors (never raised directly)."""

    code = None
    http_status = 500
    retryable = False
    deprecated = False

    def to_json(self):
        return {"code": self.code, "message": (self.__doc__ or "").strip().splitlines()[0]}


class ClientError(ApiError):
    """The request cannot be processed as sent."""

    http_status = 400


class InvalidAmount(ClientError):
    """The amount is zero, negative or has too many decimal places."""

    code = "PAY-1001"


class UnsupportedCurrency(ClientError):
    """The currency is not enabled for this merchant."""

    code = "PAY-1002"
    http_status = 422


class DuplicateRequest(ClientError):
    """A request with this idempotency key is still being processed."""

    code = "PAY-1003"
    http_status = 409
    retryable = True


class CardDeclined(ClientError):
    """The issuing bank declined the card."""

    code = "PAY-2001"
    http_status = 402


class InsufficientFunds(CardDeclined):
    """The card does not have enough funds for this amount."""

    code = "PAY-2002"


class AuthError(ApiError):
    """The caller could not be authenticated."""

    http_status = 401


class InvalidApiKey(AuthError):
    """The API key is unknown or has been revoked."""

    code = "AUTH-0001"


class ExpiredApiKey(InvalidApiKey):
    """The API key has expired; create a new one in the dashboard."""

    code = "AUTH-0002"


class Forbidden(AuthError):
    """The API key may not perform this operation."""

    code = "AUTH-0003"
    http_status = 403


class RateLimited(ApiError):
    """Too many requests; retry after the time given in Retry-After."""

    code = "RATE-0001"
    http_status = 429
    retryable = True


class UpstreamTimeout(ApiError):
    """The card network did not answer in time."""

    code = "NET-0001"
    http_status = 504
    retryable = True


class UpstreamUnavailable(UpstreamTimeout):
    """The card network cannot be reached."""

    code = "NET-0002"
    http_status = 503


class _InvariantViolated(ApiError):
    """Internal consistency check failed (logged, reported to clients as a plain 500)."""

    code = "SYS-0001"
