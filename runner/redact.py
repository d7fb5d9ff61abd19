"""API-key redaction (#47), re-exported from :mod:`scoring.redact`, where it lives so that
``tau2gate`` (which may not import ``runner``) shares the one set of keys."""

from __future__ import annotations

from scoring.redact import MIN_SECRET, REDACTED, add_secret, clear_secrets, redact, redact_bytes

__all__ = ["MIN_SECRET", "REDACTED", "add_secret", "clear_secrets", "redact", "redact_bytes"]
