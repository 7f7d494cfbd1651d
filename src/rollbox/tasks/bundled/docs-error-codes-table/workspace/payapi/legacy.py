"""Errors kept for clients of the v1 API. They are still returned, but will be removed."""
from payapi.errors import AuthError, CardDeclined, ClientError


class LegacySignatureInvalid(AuthError):
    """The v1 request signature does not match the payload."""

    code = "AUTH-0101"
    deprecated = True


class LegacyCardBlocked(CardDeclined):
    """The card is blocked by the issuer (v1 clients only)."""

    code = "PAY-2101"
    deprecated = True


class LegacyMissingField(ClientError):
    """A field required by the v1 format is missing."""

    code = "PAY-1101"
    http_status = 422
    deprecated = True
