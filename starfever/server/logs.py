"""Structured logs: one JSON object per line, each with the request id of the request it
belongs to, the ids the request has come to know as fields of their own (:func:`bind`: the
account, the operator's player id, the round, the wallet calls' transaction ids), and no
secret.

``starfever serve --log-format json`` (the default) configures uvicorn's loggers and the
server's own with :class:`JsonFormatter`; ``text`` keeps plain lines for a terminal. The
access log is the server's own (:func:`access`): method, the path without its query string
(a launch address carries a single-use token there), status, duration, client and request id;
uvicorn's access log, which prints the full request line, is off. Nothing logs a header, a
body or a token; :func:`scrub` masks anything shaped like a bearer token or a password field
in a message that slips through, as a second line of defence. A logged value is a caller's
text at times (a path is percent-decoded: ``%0a`` is a line feed): the text format writes
its control characters escaped (:func:`escape_controls`), so a request cannot forge a log line
or send the terminal an escape sequence; the JSON format escapes them as JSON does.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
from datetime import UTC, datetime
from typing import Any

REQUEST_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_id",
                                                                        default=None)
"""The id of the request being served (set by the request middleware)."""
FIELDS: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar("log_fields",
                                                                             default=None)
"""The fields every log line of the request being served carries (set to a fresh dict by the
request middleware; :func:`bind` adds to it, also from a worker thread the request runs in,
whose copy of the context holds the same dict)."""
REQUEST_ID_HEADER = "x-request-id"
_VALID_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
FORMATS = ("json", "text")

_SECRETS = (
    (re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]+"), r"\1***"),
    (re.compile(r'(?i)("?(?:password|otp|token|launch_token|secret)"?\s*[:=]\s*"?)[^",\s}]+'),
     r"\1***"),
    (re.compile(r"(?i)([?&](?:launch|token)=)[^&\s]+"), r"\1***"),
)


def scrub(text: str) -> str:
    """``text`` with bearer tokens, password/otp/token fields and token query values masked."""
    for pattern, replacement in _SECRETS:
        text = pattern.sub(replacement, text)
    return text


_CONTROLS = {code: f"\\x{code:02x}" for code in (*range(0x20), *range(0x7f, 0xa0))}
_CONTROLS.update({ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t",
                  0x2028: "\\u2028", 0x2029: "\\u2029"})


def escape_controls(text: str) -> str:
    """``text`` with its control characters (C0, DEL, C1, the Unicode line and paragraph
    separators) written as escapes: ``\\n``, ``\\x00``, ``\\x1b``; one line whatever it held."""
    return text.translate(_CONTROLS)


def bind(**fields: str | int | None) -> None:
    """Add ``fields`` to every further log line of the request being served (its access line
    included): ``account_id``, ``player_id``, ``round_id``, ``transaction_id``... Outside a
    request (a background thread), nothing: pass them as ``extra`` there."""
    bound = FIELDS.get()
    if bound is not None:
        bound.update({k: v for k, v in fields.items() if v is not None})


def accepted_request_id(value: str | None) -> str | None:
    """A caller's ``X-Request-ID`` if it is a plain token of at most 64 characters (anything
    else is replaced by a fresh id: a log line must not carry what a caller injected)."""
    return value if value is not None and _VALID_ID.fullmatch(value) else None


_STANDARD = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime",
                                                            "color_message"}


class JsonFormatter(logging.Formatter):
    """A log record as one JSON line: time (UTC, ISO 8601), level, logger, message, the
    request id, any ``extra`` fields, and a traceback as ``exc``."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(), "logger": record.name,
            "message": scrub(record.getMessage()),
        }
        request_id = getattr(record, "request_id", None) or REQUEST_ID.get()
        if request_id:
            entry["request_id"] = request_id
        for key, value in (FIELDS.get() or {}).items():
            entry.setdefault(key, value if isinstance(value, int | float | bool | None)
                             else scrub(str(value)))
        for key, value in record.__dict__.items():
            if key not in _STANDARD and key != "request_id" and not key.startswith("_"):
                entry[key] = value if isinstance(value, int | float | bool | None) \
                    else scrub(str(value))
        if record.exc_info:
            entry["exc"] = scrub(self.formatException(record.exc_info))
        return json.dumps(entry, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """Plain lines for a terminal, with the request id where there is one; a message is one
    line with its control characters escaped (a traceback follows on lines of its own)."""

    def format(self, record: logging.LogRecord) -> str:
        request_id = getattr(record, "request_id", None) or REQUEST_ID.get()
        message = escape_controls(scrub(record.getMessage()))
        line = f"{record.levelname.lower():<7} {record.name}: {message}"
        if request_id:
            line += f" [{request_id}]"
        if record.exc_info:
            line += "\n" + scrub(self.formatException(record.exc_info))
        return line


ACCESS = logging.getLogger("starfever.access")


def access(method: str, path: str, status: int, seconds: float, client: str | None,
           request_id: str) -> None:
    """One access-log line (info level)."""
    ACCESS.info("%s %s %d", method, path, status,
                extra={"method": method, "path": path, "status": status,
                       "duration_ms": round(seconds * 1000, 2), "client": client,
                       "request_id": request_id})


def log_config(log_format: str, level: str) -> dict[str, Any]:
    """The ``logging.config.dictConfig`` of every server process (uvicorn's ``log_config``)."""
    formatter = "starfever.server.logs.JsonFormatter" if log_format == "json" else \
        "starfever.server.logs.TextFormatter"
    handler = {"class": "logging.StreamHandler", "formatter": "main",
               "stream": "ext://sys.stderr"}
    upper = level.upper()
    return {
        "version": 1, "disable_existing_loggers": False,
        "formatters": {"main": {"()": formatter}},
        "handlers": {"main": handler},
        "loggers": {
            "uvicorn": {"handlers": ["main"], "level": upper, "propagate": False},
            "uvicorn.error": {"level": upper},
            "uvicorn.access": {"handlers": [], "level": "WARNING", "propagate": False},
            "starfever": {"handlers": ["main"], "level": upper, "propagate": False},
        },
    }


__all__ = ["FIELDS", "FORMATS", "REQUEST_ID", "REQUEST_ID_HEADER", "JsonFormatter",
           "TextFormatter", "accepted_request_id", "access", "bind", "escape_controls",
           "log_config", "scrub"]
