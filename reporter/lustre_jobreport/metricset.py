"""The lustreclient metrics a job snapshot takes, shared by the in-process and pminfo paths
(rawsnap.py must not import pcpfetch: numpy and the PCP bindings cost the prolog ~0.2 s)."""

METRIC_ROOT = "lustreclient"
# What a snapshot takes: the per-filesystem and per-MDT subtrees whole, and of the per-OSC
# metrics only those the report uses. Per-OSC values are what makes a snapshot big (2,048 OSCs
# on a large client: every per-OSC metric is 2 M values on a 1,000-host job), so e.g. the
# per-OSC RPC-size histograms (30 values per OSC; the report takes lustreclient.fs.rpc.*) and
# tunables stay out; they remain available live through PCP.
SNAPSHOT_METRICS = (
    "lustreclient.version", "lustreclient.pagesize", "lustreclient.llite", "lustreclient.fs",
    "lustreclient.mdc",
    "lustreclient.osc.read_bytes", "lustreclient.osc.write_bytes", "lustreclient.osc.read_rpcs",
    "lustreclient.osc.write_rpcs", "lustreclient.osc.req_waittime", "lustreclient.osc.req_count",
    "lustreclient.osc.stats_start", "lustreclient.osc.rpc_stats_start", "lustreclient.osc.state",
    "lustreclient.osc.connect_count", "lustreclient.osc.reconnects",
)


def wanted(name: str) -> bool:
    return any(name == m or name.startswith(m + ".") for m in SNAPSHOT_METRICS)
