"""The synthetic job rows of kit.compare_rows have the dataset's columns and agree with
themselves (RPC histogram and RPC count, volumes, the hybrid I/O switch)."""

from __future__ import annotations

import numpy as np

from lustre_jobreport.records import jobrow
from kit.compare_rows import BUCKETS, jobs, table



def test_rows_have_the_dataset_columns_and_agree_with_themselves():
    rng = np.random.default_rng(1)
    t = table(jobs(rng, 50), jobs(rng, 30, job_name="wrf", hybrid_read=True))
    assert t.column_names == list(jobrow.COLUMNS) and t.num_rows == 80
    d = t.to_pydict()
    for i in range(80):
        hist = sum(d[f"rpc_read_{b}"][i] for b in BUCKETS)
        assert hist == d["ost_read_rpcs"][i] > 0
        assert d["read_bytes"][i] > 0 and d["trusted"][i] is True
    assert d["hybrid_read_switch"][79] > 0 and d["hybrid_read_switch"][0] == 0
