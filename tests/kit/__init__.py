"""What the tests share: helpers, never tests (pytest.ini puts tests/ on the path, so a test
imports `from kit.privpmcd import PrivatePmcd`; bench/ and scripts/ put tests/ on theirs).

Real parts to test against:
    privpmcd     a private pmcd running the real pmdalustreclient on a simulator tree
    dup_pmda     a stand-in agent whose OSC instance domain names one instance twice
    syspmcd      this machine's system pmcd, for the package test
    agentfetch   every lustreclient metric from a pmcd through PMAPI, plainly
    storeloop    PMAPI clients that store into the job control metrics, run as processes
    agentdiff    the agent's diff rules (pmda-lustre/src/jobdiff.c) through ctypes
    simreader    a reader of Lustre client trees written from notes/lustre-formats.md alone
    pcpkit       PCP's tools on archives the real pmlogger recorded
    hookkit      the scheduler hooks run as Slurm and PBS run them
    nsshang      NSS whose group lookups hang, for one command at a time
    slurmkit     a real single-node Slurm

Data made for the tests:
    snapshots    hand-built snapshots, each value written out
    jobviews     hand-built answers of the agents' job view
    diffcases    random jobs for the diff rules' property tests, and their snapshots
    packed       zlib streams of zeros, as snapshot files carry them
    records      synthetic report documents and records, part files, damaged files
    compare_rows synthetic job rows of the dataset for compare
    corpuskit    the validation corpus' model and runner (python -m kit.corpuskit, from tests/)
    corpus_cases the validation corpus' cases
    fleet        a simulated cluster's job history across a client change

Running them:
    proptest     how many cases a property test runs (make test, make fuzz)
    manpages     a man page's roff source against an argparse command line
"""
