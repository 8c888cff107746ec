"""Exceptions raised for bad profiles and bad options.

Every problem with an input file surfaces as a :class:`ProfileError` subclass carrying the file
(``.path``) and the reason (``.reason``); the C++ core never aborts the interpreter.
"""

from __future__ import annotations

from typing import Optional

__all__ = [
    "ProfileError",
    "ProfileNotFoundError",
    "CorruptProfileError",
    "InvalidOptionError",
]


class ProfileError(Exception):
    """A profile could not be read or analysed.

    Attributes:
        path: the file or directory at fault (``None`` when the problem is an option).
        reason: what is wrong, without the path.
        offset: byte offset in the (decompressed) file where known, else ``None``.
    """

    def __init__(self, message: str, path: Optional[str] = None, reason: str = "",
                 offset: Optional[int] = None) -> None:
        super().__init__(message)
        self.path = path
        self.reason = reason or message
        self.offset = offset


class ProfileNotFoundError(ProfileError):
    """No profile at the given path (missing file, no session or host of that name)."""


class CorruptProfileError(ProfileError):
    """The file exists but is not a readable profile (truncated, mangled, not an XSpace)."""


class InvalidOptionError(ProfileError, ValueError):
    """An option is invalid (a bad regex, an unknown grouping)."""


_NOT_FOUND_PREFIXES = (
    "no such file",
    "cannot open",
    "no profile found",
    "no session",
    "no host",
    "is the run directory of session",
)


def _from_core(path: str, reason: str, offset: int, message: str) -> ProfileError:
    """Builds the exception for an error reported by the C++ core (called from _core)."""
    off = offset if offset >= 0 else None
    if not path:
        return InvalidOptionError(message, None, reason, off)
    cls = ProfileNotFoundError if reason.startswith(_NOT_FOUND_PREFIXES) else CorruptProfileError
    return cls(message, path, reason, off)
