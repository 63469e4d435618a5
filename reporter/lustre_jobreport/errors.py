"""Errors the CLI turns into one-line messages (exit code 2) instead of tracebacks."""


class JobReportError(Exception):
    """A problem the user can act on: bad input file, bad config, bad arguments."""


class SnapshotFileError(JobReportError):
    """A snapshot file that cannot be read or does not follow the schema."""


class ConfigError(JobReportError):
    """A site config file that cannot be read or has wrong values."""
