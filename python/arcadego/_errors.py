"""The exception hierarchy: one class per status code of the C ABI.

Every class derives from :class:`Error`. Where a builtin exception means the
same thing, the class derives from it too, so ``except ValueError`` catches
bad input whether the Python side or the library found it.
"""

from __future__ import annotations

__all__ = [
    "Error",
    "InvalidArgumentError",
    "NotFoundError",
    "AlreadyExistsError",
    "ConflictError",
    "StorageError",
    "ClosedError",
    "CorruptError",
    "CanceledError",
    "InternalError",
    "PerformanceWarning",
    "error_for_code",
]


class Error(Exception):
    """Base class of every arcadego error.

    ``code`` is the C status code (0 when the error was raised on the Python
    side without a matching code).

    Example::

        try:
            db.create_type("A")
        except arcadego.AlreadyExistsError:
            pass
    """

    code: int = 0

    def __init__(self, message: str = "") -> None:
        super().__init__(message)


class InvalidArgumentError(Error, ValueError):
    """Bad input: a bad name, bad Arrow data, a type mismatch, ragged columns."""

    code = 1


class NotFoundError(Error, LookupError):
    """An unknown type, property, index or device."""

    code = 2


class AlreadyExistsError(Error):
    """Creating something that exists."""

    code = 3


class ConflictError(Error):
    """A concurrent commit made this one invalid."""

    code = 4


class StorageError(Error, OSError):
    """The operating system refused a read, write or fsync (or the directory
    is open in another process)."""

    code = 5

    def __init__(self, message: str = "") -> None:
        OSError.__init__(self, message)

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class ClosedError(Error):
    """The database or transaction is closed."""

    code = 6


class CorruptError(Error):
    """Files on disk failed a checksum or format check."""

    code = 7


class CanceledError(Error):
    """The call was canceled (for example by Ctrl-C)."""

    code = 8


class InternalError(Error):
    """A bug in arcadego: please report it."""

    code = 9


class PerformanceWarning(UserWarning):
    """Emitted when a usage pattern is much slower than the alternative, such
    as many autocommit DDL statements on a durable database."""


_BY_CODE: dict[int, type[Error]] = {
    cls.code: cls
    for cls in (
        InvalidArgumentError,
        NotFoundError,
        AlreadyExistsError,
        ConflictError,
        StorageError,
        ClosedError,
        CorruptError,
        CanceledError,
        InternalError,
    )
}


# The library ends each message with its kind, as Go code wraps errors
# ("...: invalid argument"); the exception's class already says it. The
# suffix stays where it is all the message says about the object named
# before it ('type "Nope": not found').
_KIND_TEXT: dict[int, str] = {
    1: "invalid argument", 2: "not found", 3: "already exists", 4: "conflict", 5: "i/o error",
    6: "closed", 7: "corrupt", 8: "canceled", 9: "internal error",
}


def _readable(code: int, message: str) -> str:
    suffix = ": " + _KIND_TEXT.get(code, "\0")
    if not message.endswith(suffix):
        return message
    head = message[: -len(suffix)]
    if head.endswith(('"', "'")) or ": " not in head:
        return message
    return head


def error_for_code(code: int, message: str) -> Error:
    """Return the exception for a C status code (InternalError if unknown)."""
    cls = _BY_CODE.get(code)
    if cls is None:
        return InternalError(f"status {code}: {message}")
    return cls(_readable(code, message))
