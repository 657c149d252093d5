"""Errors that reach the user as one clear line (CLI exit code 2, a dialog in the GUI)."""


class UsageError(Exception):
    """Bad input from the user: a wrong option, a missing file, an invalid design."""
