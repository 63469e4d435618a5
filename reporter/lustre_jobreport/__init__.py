"""lustre-jobreport: per-job Lustre client I/O reports from pmdalustreclient snapshots."""

SCHEMA = "lustre-jobreport/2"
__version__ = "0.1.0"
