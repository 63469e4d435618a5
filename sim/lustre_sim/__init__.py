"""lustre_sim: simulated Lustre client trees (proc, sysfs, debugfs) driven by workloads.

    from lustre_sim import SimClient
    c = SimClient.create(root, version="2.15.4", filesystems=[("scratch", 8, 1)], seed=1)
    c.run("enzo", fs="scratch")
    c.fault("clear", fs="scratch")
    c.set(max_read_ahead_mb=0, quirks=["ra-8k-rpcs"])
"""

from .client import SimClient
from .settings import QUIRKS
from .version import SUPPORTED, parse as parse_version
from .workloads import REGISTRY as WORKLOADS, TABLE_I_READ, TABLE_I_WRITE, TABLE_II

__all__ = ["SimClient", "QUIRKS", "SUPPORTED", "parse_version", "WORKLOADS", "TABLE_I_READ",
           "TABLE_I_WRITE", "TABLE_II"]
__version__ = "0.1.0"
