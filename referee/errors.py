"""Errors that reach the user as one clear message (never a traceback)."""


class UserError(Exception):
    """Bad input from the user (a config typo, a missing file, a bad flag value).

    The CLI prints ``error: <message>`` and exits with status 2. The message
    says what is wrong and what to do about it.
    """
