from lustre_jobreport import config
from lustre_jobreport.report import view as render, document as report

from kit.snapshots import host, node, snap

CFG = config.Config()


def doc_for(begin, end):
    return report.build(begin, end, CFG, job_id="9", user="bo")


def lines_of(text):
    lines = text.splitlines()
    assert len(lines) <= render.MAX_LINES and max(map(len, lines)) <= render.WIDTH, text
    return lines


def busy_fs_host(name, fs, scale):
    """A host with one busy filesystem that fires every implemented flag."""
    m = {"version": {"": "2.15.4"}, "llite.mount_id": {fs: "ffff"}}
    for op, n in {"open": 5000, "close": 5000, "getattr": 20000, "statfs": 2000,
                  "read_bytes": 1 << 30, "write_bytes": 1 << 30}.items():
        m[f"llite.{op}"] = {fs: n * scale}
    m["fs.rpc.read"] = {f"{fs}:4K": 5000 * scale, f"{fs}:1M": 100 * scale}
    m["fs.rpc.write"] = {f"{fs}:4K": 5000 * scale, f"{fs}:1M": 100 * scale}
    return m


def test_many_findings_on_many_filesystems_still_fit_40_by_80():
    filesystems = [f"fs{i}" for i in range(6)]
    b, e = {}, {}
    for fs in filesystems:
        for k, v in busy_fs_host("n1", fs, 0).items():
            b.setdefault(k, {}).update(v)
        for k, v in busy_fs_host("n1", fs, 1).items():
            e.setdefault(k, {}).update(v)
    doc = doc_for(snap(0.0, host("n1", b)), snap(100.0, host("n1", e)))
    assert len(doc["flags"]) == 6 * 5          # every filesystem fires all five
    lines = lines_of(render.render_text(doc))
    assert "truncated" in lines[-1]             # says so instead of silently dropping


def test_a_quiet_job_says_no_problems_and_lists_idle_filesystems():
    doc = doc_for(snap(0.0, node("n1", llite={"open": 3})), snap(10.0, node("n1", llite={"open": 3})))
    text = "\n".join(lines_of(render.render_text(doc)))
    assert "No I/O problems found." in text and "Not used by this job: scratch" in text


def test_no_lustre_is_one_line_and_unreachable_host_is_named():
    b = snap(0.0, host("n1", {"version": {"": "2.15.4"}}), host("n2", {}, ok=False, error="timed out"))
    e = snap(5.0, host("n1", {"version": {"": "2.15.4"}}), host("n2", {}, ok=False, error="timed out"))
    text = "\n".join(lines_of(render.render_text(doc_for(b, e))))
    assert "No Lustre filesystem was mounted on the job's hosts." in text
    assert "n2 could not be read at job start: timed out" in text and "1 unreachable" in text


def test_html_escapes_what_came_from_hosts():
    b = snap(0.0, node("n1", llite={"open": 1}), host("<b>x</b>", {}, ok=False, error="<script>"))
    e = snap(5.0, node("n1", llite={"open": 2}), host("<b>x</b>", {}, ok=False, error="<script>"))
    html = render.render_html(doc_for(b, e))
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_compact_counts_and_bars():
    assert [render.compact(n) for n in (0, 99999, 100000, 999999, 1234567)] == ["0", "99999", "100k", "1.0M", "1.2M"]
    assert [render.compact(n, 4) for n in (9999, 12243, 99999)] == ["9999", "12k", "100k"]
    assert render.bar(0, 10) == " " and render.bar(1, 10**6) == "▁" and render.bar(10, 10) == "█"


def test_multi_host_job_shows_the_spread():
    b = snap(0.0, *[node(f"n{i}", llite={"write_bytes": 0}) for i in range(3)])
    e = snap(3600.0, node("n0", llite={"write_bytes": 9 << 30}), node("n1", llite={"write_bytes": 1 << 30}),
             node("n2", llite={"write_bytes": 2 << 30}))
    text = render.render_text(doc_for(b, e))
    assert "per host: min 1.0 GiB, median 2.0 GiB, max 9.0 GiB (n0)" in text


def test_a_histogram_that_could_not_be_read_is_not_shown_as_no_rpcs():
    def n1(t, read, rpc_stats):
        return snap(t, host("n1", {"version": {"": "2.15.4"}, "llite.mount_id": {"scratch": "f1"},
                                   "llite.read_bytes": {"scratch": read}}, rpc_stats=rpc_stats))
    unread = doc_for(n1(0.0, 0, False), n1(60.0, 1 << 30, False))
    assert "RPC sizes: not read (see Not trusted)" in render.render_text(unread)
    assert "RPC sizes: not read (see Not trusted)" in render.render_html(unread)
    assert "not read" not in render.render_text(doc_for(n1(0.0, 0, True), n1(60.0, 1 << 30, True)))


def fs_doc(**fs) -> dict:
    """A report of one filesystem, written out (the renderer takes any document of DESIGN §3's shape)."""
    base = {"read_bytes": 1 << 30, "write_bytes": 0, "read_calls": 1024, "write_calls": 0,
            "ops": {"open": 3, "close": 3, "getattr": 0, "statfs": 0, "setattr": 0, "fsync": 0},
            "rpc": {"read": {"4K": 1, "1M": 1024}, "write": {"4K": 0, "1M": 0}}, "osts": {},
            "hosts": {}, "ost_count": 4, "spread": None, "trouble": [], "left_out": {}, "not_read": []}
    return {"job": {"hosts": ["n1", "n2"], "hosts_missing": [], "hosts_incomplete": {}},
            "lustre_versions": {}, "filesystems": {"scratch": base | fs}, "flags": [],
            "data_quality": [{"id": "METRIC_TYPE", "host": None, "fs": None, "detail": "left out"}]}


def test_every_total_not_read_is_said_so_never_0():
    doc = fs_doc(read_bytes=None, write_calls=None, ops={"open": None, "close": 3, "getattr": 0, "statfs": 0,
                                                        "setattr": 0, "fsync": 0},
                 rpc={"read": None, "write": {"4K": 0, "1M": 7}},
                 left_out={"read_bytes": 2, "write_calls": 2, "ops.open": 2, "rpc.read": 2},
                 not_read=["ops.open", "read_bytes", "rpc.read", "write_calls"])
    lines = lines_of(render.render_text(doc))
    assert "scratch: read: bytes not read, 1,024 calls" in lines
    assert "         write 0 B, calls not read" in lines
    assert "  read  not read" in lines and " write     0      7█" in lines
    assert "  open not read  close 3  getattr 0  statfs 0  setattr 0  fsync 0" in lines
    assert not any("partly read" in line for line in lines)     # not read at all: said on its own line
    html = render.render_html(doc)
    assert "read: bytes not read, 1,024 calls" in html and "<td>not read</td>" in html
    assert "RPCs by size" not in html                           # no chart draws a direction not read as 0


def test_a_histogram_and_the_osts_not_read_at_all_are_one_line_each():
    doc = fs_doc(rpc={"read": None, "write": None}, left_out={"rpc.read": 1, "rpc.write": 1, "osts.read_bytes": 1,
                                                              "osts.write_bytes": 1},
                 not_read=["osts.read_bytes", "osts.write_bytes", "rpc.read", "rpc.write"])
    lines = lines_of(render.render_text(doc))
    assert "  RPC sizes: not read (see Not trusted)" in lines and "  OSTs: not read" in lines


def test_totals_counted_on_some_hosts_only_are_named_under_their_filesystem():
    doc = fs_doc(left_out={"read_bytes": 1, "read_calls": 1, "ops.open": 1, "ops.close": 1, "osts.read_bytes": 1})
    lines = lines_of(render.render_text(doc))
    assert "  partly read (see Not trusted): read bytes, read calls, ops, OSTs" in lines
    assert "scratch: read 1.0 GiB in 1,024 calls" in lines       # no mean of sums over other hosts
    assert "partly read (see Not trusted): read bytes, read calls, ops, OSTs" in render.render_html(doc)


def test_a_filesystem_whose_values_were_left_out_is_not_called_unused():
    doc = fs_doc(read_bytes=None, read_calls=None, left_out={"read_bytes": 1, "read_calls": 1},
                 not_read=["read_bytes", "read_calls"], rpc={"read": {"4K": 0}, "write": {"4K": 0}},
                 ops={"open": 0, "close": 0})
    text = render.render_text(doc)
    assert "Not used by this job" not in text and "scratch: read: not read" in text
