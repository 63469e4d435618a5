"""lustre_sim: simulated Lustre client trees (proc, sysfs, debugfs) driven by workloads.

    from lustre_sim import SimClient
    c = SimClient.create(root, version="2.15.4", filesystems=[("scratch", 8, 1)], seed=1)
    c.run("enzo", fs="scratch")
    c.fault("clear", fs="scratch")
"""

from .client import SimClient
from .version import SUPPORTED, parse as parse_version
from .workloads import REGISTRY as WORKLOADS, TABLE_I_READ, TABLE_I_WRITE, TABLE_II

__all__ = ["SimClient", "SUPPORTED", "parse_version", "WORKLOADS", "TABLE_I_READ",
           "TABLE_I_WRITE", "TABLE_II"]
__version__ = "0.1.0"
