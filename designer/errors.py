"""Errors that reach the user as one clear line (CLI exit code 2 or 1, a dialog in the GUI)."""


class UsageError(Exception):
    """Bad input from the user: a wrong option, a missing file, an invalid design (exit code 2)."""


class ResultError(Exception):
    """The command ran but its result cannot be trusted, e.g. a figure that is not a finite
    number (NaN, infinite); the message names the figure (exit code 1, nothing else printed)."""
