"""lustre-jobreport: per-job Lustre client I/O reports from pmdalustreclient snapshots."""

# Snapshot files (snapformat): 2 added PMIDs and the raw form.
SCHEMA = "lustre-jobreport/2"
# Report documents and job records (report, records, jobrow): 3 added the job's name, command,
# partition, account, node and task counts, "clients" (version, kernel, OS, settings per host) and
# per filesystem latency_us, readahead and hybrid. Readers read every older one.
REPORT_SCHEMA = "lustre-jobreport/3"
__version__ = "0.1.0"
