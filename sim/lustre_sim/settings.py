"""Client settings (tunables), the node's identity and the client quirks.

`SimClient.set(**settings)`, `SimClient.create(settings=..., quirks=...)` and `lustre-sim set`
all go through `apply()`. Settings change the files of the tree and what the model does;
quirks change only what the model does (never a file format).

Where each file lives and its default per version: version.Profile.llite_tunable_root,
osc_tunable_root, llite_defaults, max_dirty_mb_default, host_defaults.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from .version import NODE_RAM_GIB, Profile

MiB = 1 << 20

# name -> (ticket it follows, what it does). README "Client quirks" says more.
QUIRKS = {
    "ra-8k-rpcs": ("[SAINI] §VI.A (io-findings §4), Lustre 1.8 era",
                   "read-ahead issues 8 KiB at a time: sequential buffered reads leave as 8 KiB "
                   "RPCs instead of max_pages_per_rpc ones; random reads and writes unchanged"),
    "ra-split-rpcs": ("after LU-12533 (read-ahead split per stripe; fixed in 2.12.5 / 2.13), at a chosen severity F",
                      "read-ahead ranges are split before they become RPCs: sequential buffered "
                      "reads leave in F times the RPCs (ra-split-rpcs=F, 1 < F <= 64), each "
                      "read-ahead RPC as even pieces, so the mean read RPC is F times smaller; "
                      "random reads and writes unchanged"),
    "lu15274": ("LU-12043 -> LU-15274 (fixed in 2.16.0)",
                "reads of files no larger than max_read_ahead_whole_mb lose the fast read path: "
                "every call after a handle's first takes ~446 us more (dd bs=4K of a 64 MiB "
                "file: 9.1 MB/s, not 994 MB/s); RPCs unchanged"),
    "poor-write-aggregation": ("LU-8515 (2.4-2.9 clients; fixed in 2.9.51)",
                               "an object's dirty pages are sent as soon as they add up to "
                               "max_pages_per_rpc, contiguous or not: interleaved small writes "
                               "leave in partial RPCs instead of full ones"),
}
# quirks that take a factor, NAME=F: name -> the largest F (the least is above 1)
QUIRK_FACTORS = {"ra-split-rpcs": 64}

LLITE_KEYS = ("max_read_ahead_mb", "max_read_ahead_per_file_mb", "max_read_ahead_whole_mb",
              "checksums", "hybrid_io", "hybrid_io_read_threshold_bytes",
              "hybrid_io_write_threshold_bytes")
OSC_KEYS = ("max_pages_per_rpc", "max_rpcs_in_flight", "max_dirty_mb", "osc_checksums")
HOST_KEYS = ("kernel", "os_image", "image_id", "image_version")
ALIASES = {"checksum_pages": "checksums", "llite.checksum_pages": "checksums",
           "osc.checksums": "osc_checksums",
           **{f"llite.{k}": k for k in LLITE_KEYS}, **{f"osc.{k}": k for k in OSC_KEYS[:3]}}
KEYS = LLITE_KEYS + OSC_KEYS + HOST_KEYS + ("quirks",)
HYBRID_THRESHOLD_MAX = 2 << 30        # HYBRID_IO_THRESHOLD_BYTES_MAX (lproc_llite.c)
OSC_MAX_DIRTY_MB_MAX = 2048           # obd.h
OSC_MAX_RIF_MAX = 256                 # obd.h OBD_MAX_RIF_MAX


# ----------------------------------------------------------------------------------------------
# node identity: /proc/sys/kernel/osrelease, /usr/lib/os-release (+ /etc/os-release symlink),
# /etc/redhat-release

_CODENAME = {("rhel", 6): "Santiago", ("rhel", 7): "Maipo", ("rhel", 8): "Ootpa",
             ("rhel", 9): "Plow", ("rhel", 10): "Coughlan", ("rocky", 8): "Green Obsidian",
             ("rocky", 9): "Blue Onyx", ("rocky", 10): "Red Quartz"}


def os_image(preset: str) -> tuple[str | None, str | None]:
    """(os-release text or None, redhat-release text or None) of an image preset:
    rhel-X.Y or rocky-X.Y. RHEL 6 has no os-release (it came with systemd, RHEL 7)."""
    m = re.fullmatch(r"(rhel|rocky)-(\d+)\.(\d+)", preset.strip().lower())
    if not m or (m.group(1), int(m.group(2))) not in _CODENAME:
        known = ", ".join(f"{d}-{v}.Y" for d, v in _CODENAME)
        raise ValueError(f"unknown os image {preset!r} (known: {known}, none, or a dict of "
                         f"os-release fields)")
    distro, major, minor = m.group(1), int(m.group(2)), int(m.group(3))
    ver = f"{major}.{minor}"
    code = _CODENAME[(distro, major)]
    if distro == "rhel":
        server = " Server" if major <= 7 else ""
        rr = f"Red Hat Enterprise Linux{server} release {ver} ({code})\n"
        if major == 6:
            return None, rr
        if major == 7:
            lines = [("NAME", "Red Hat Enterprise Linux Server"), ("VERSION", f"{ver} ({code})"),
                     ("ID", "rhel"), ("ID_LIKE", "fedora"), ("VARIANT", "Server"),
                     ("VARIANT_ID", "server"), ("VERSION_ID", ver),
                     ("PRETTY_NAME", f"Red Hat Enterprise Linux Server {ver} ({code})"),
                     ("ANSI_COLOR", "0;31"),
                     ("CPE_NAME", f"cpe:/o:redhat:enterprise_linux:{ver}:GA:server"),
                     ("HOME_URL", "https://www.redhat.com/"),
                     ("BUG_REPORT_URL", "https://bugzilla.redhat.com/")]
        else:
            lines = [("NAME", "Red Hat Enterprise Linux"), ("VERSION", f"{ver} ({code})"),
                     ("ID", "rhel"), ("ID_LIKE", "fedora"), ("VERSION_ID", ver),
                     ("PLATFORM_ID", f"platform:el{major}"),
                     ("PRETTY_NAME", f"Red Hat Enterprise Linux {ver} ({code})"),
                     ("ANSI_COLOR", "0;31")]
            if major >= 9:
                lines.append(("LOGO", "fedora-logo-icon"))
            lines += [("CPE_NAME", f"cpe:/o:redhat:enterprise_linux:{major}::baseos"),
                      ("HOME_URL", "https://www.redhat.com/"),
                      ("DOCUMENTATION_URL", "https://access.redhat.com/documentation/en-us/"
                                            f"red_hat_enterprise_linux/{major}"),
                      ("BUG_REPORT_URL", "https://bugzilla.redhat.com/" if major == 8
                       else "https://issues.redhat.com/")]
        text = _render(lines) + (
            f'\nREDHAT_BUGZILLA_PRODUCT="Red Hat Enterprise Linux {major}"\n'
            f"REDHAT_BUGZILLA_PRODUCT_VERSION={ver}\n"
            f'REDHAT_SUPPORT_PRODUCT="Red Hat Enterprise Linux"\n'
            f'REDHAT_SUPPORT_PRODUCT_VERSION="{ver}"\n')
        return text, rr
    lines = [("NAME", "Rocky Linux"), ("VERSION", f"{ver} ({code})"), ("ID", "rocky"),
             ("ID_LIKE", "rhel centos fedora"), ("VERSION_ID", ver),
             ("PLATFORM_ID", f"platform:el{major}"),
             ("PRETTY_NAME", f"Rocky Linux {ver} ({code})"), ("ANSI_COLOR", "0;32"),
             ("LOGO", "fedora-logo-icon"), ("CPE_NAME", f"cpe:/o:rocky:rocky:{major}::baseos"),
             ("HOME_URL", "https://rockylinux.org/"),
             ("BUG_REPORT_URL", "https://bugs.rockylinux.org/"),
             ("ROCKY_SUPPORT_PRODUCT", f"Rocky-Linux-{major}"),
             ("ROCKY_SUPPORT_PRODUCT_VERSION", ver),
             ("REDHAT_SUPPORT_PRODUCT", "Rocky Linux"), ("REDHAT_SUPPORT_PRODUCT_VERSION", ver)]
    return _render(lines), f"Rocky Linux release {ver} ({code})\n"


def _render(pairs) -> str:
    out = []
    for k, v in pairs:
        k = str(k)
        if not re.fullmatch(r"[A-Z][A-Z0-9_]*", k):
            raise ValueError(f"os-release field {k!r}: names are [A-Z][A-Z0-9_]*")
        v = str(v)
        if "\n" in v or '"' in v or "\\" in v or "$" in v or "`" in v:
            raise ValueError(f"os-release {k}: keep values to one line without quotes, "
                             f"backslashes, $ or `")
        out.append(f'{k}="{v}"\n')
    return "".join(out)


def _set_field(text: str, key: str, value: str) -> str:
    line = _render([(key, value)])
    pat = re.compile(rf"^{key}=.*\n?", re.M)
    if pat.search(text):
        return pat.sub(lambda _: line, text, count=1)
    return text + ("" if text.endswith("\n") or not text else "\n") + line


def default_host(p: Profile, page_size: int) -> dict:
    d = p.host_defaults(page_size)
    osr, rr = os_image(d["os_image"])
    return {"kernel": d["kernel"], "os_release": osr, "redhat_release": rr}


# ----------------------------------------------------------------------------------------------
# parsing (CLI strings) and applying

def _as_bool(key: str, v) -> int:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int) and v in (0, 1):
        return v
    if isinstance(v, str) and v.strip().lower() in ("1", "0", "true", "false", "yes", "no", "on",
                                                     "off", "y", "n"):
        return int(v.strip().lower() in ("1", "true", "yes", "on", "y"))
    raise ValueError(f"{key}: want 0 or 1, got {v!r}")


def _as_int(key: str, v, unit: int = 1) -> int:
    """An integer; strings may carry a size suffix (K, M, G, T: bytes, then divided by unit),
    as sysfs_memparse() takes them."""
    if isinstance(v, bool):
        raise ValueError(f"{key}: want a number, got {v!r}")
    if isinstance(v, int):
        return v
    s = str(v).strip()
    m = re.fullmatch(r"(\d+)([kKmMgGtT])?(?:i?[bB])?", s)
    if not m:
        raise ValueError(f"{key}: want a number, got {v!r}")
    n = int(m.group(1))
    if m.group(2):
        n = n << {"k": 10, "m": 20, "g": 30, "t": 40}[m.group(2).lower()]
        if n % unit:
            raise ValueError(f"{key}: {v!r} is not a whole number of {unit}-byte units")
        n //= unit
    return n


def normalize(settings: dict) -> dict:
    out = {}
    for k, v in settings.items():
        key = ALIASES.get(k, k)
        if key not in KEYS:
            raise KeyError(f"unknown setting {k!r} (known: {', '.join(KEYS)})")
        out[key] = v
    return out


def parse_quirks(v) -> list[str]:
    """Quirk names (a list, or a comma string), checked, each once, in the order of QUIRKS; a
    quirk of QUIRK_FACTORS as NAME=F, F written as its shortest decimal ("ra-split-rpcs=1.5")."""
    if v is None:
        return []
    if isinstance(v, str):
        v = [] if v.strip().lower() in ("", "none") else [x.strip() for x in v.split(",")]
    chosen: dict[str, str] = {}
    for q in (x for x in v if x):
        name, eq, value = (part.strip() for part in q.partition("="))
        if name not in QUIRKS:
            raise ValueError(f"unknown quirk {q!r} (known: {', '.join(QUIRKS)})")
        if name in QUIRK_FACTORS:
            if not eq:
                raise ValueError(f"quirk {name} needs a factor: {name}=F (e.g. {name}=2)")
            q = f"{name}={_quirk_factor(name, value)}"
        elif eq:
            raise ValueError(f"quirk {name} takes no value")
        else:
            q = name
        if chosen.get(name, q) != q:
            raise ValueError(f"quirk {name} given twice ({chosen[name]}, {q})")
        chosen[name] = q
    if "ra-8k-rpcs" in chosen and "ra-split-rpcs" in chosen:
        raise ValueError("quirks ra-8k-rpcs and ra-split-rpcs both shape read-ahead RPCs: choose one")
    return [chosen[n] for n in QUIRKS if n in chosen]


def _quirk_factor(name: str, text: str) -> str:
    """A quirk's factor F as its shortest decimal text, checked against QUIRK_FACTORS."""
    try:
        f = Decimal(text)
    except InvalidOperation:
        f = None
    if f is None or not f.is_finite():
        raise ValueError(f"quirk {name}={text}: the factor is not a number")
    top = QUIRK_FACTORS[name]
    if f <= 1:
        raise ValueError(f"quirk {name}={text}: the factor must be more than 1")
    if f > top:
        raise ValueError(f"quirk {name}={text}: the factor must be at most {top}")
    return format(f.normalize(), "f")


def quirk_factor(quirks, name: str) -> Fraction | None:
    """The factor F of quirk NAME=F among parsed quirks (parse_quirks), exact; None without it."""
    for q in quirks:
        qname, _, value = q.partition("=")
        if qname == name:
            return Fraction(value)
    return None


def apply(st: dict, p: Profile, settings: dict, fs: str | None = None) -> dict:
    """Check and apply settings to the state, in the order given (as successive
    `lctl set_param` would be: max_read_ahead_per_file_mb is checked against the
    max_read_ahead_mb in force when it is set). fs: one filesystem, else every one.
    Returns what was set, for the log."""
    settings = normalize(settings)
    if fs is not None and fs not in st["mounts"]:
        raise KeyError(f"no filesystem {fs!r} mounted (have: {', '.join(st['mounts'])})")
    mounts = [st["mounts"][fs]] if fs is not None else list(st["mounts"].values())
    done = {}
    for key, v in settings.items():
        if key in LLITE_KEYS:
            for m in mounts:
                _set_llite(p, m, key, v)
            done[key] = mounts[0]["llite"]["tun"][key] if mounts else v
        elif key in OSC_KEYS:
            for m in mounts:
                for osc in m["osc"]:
                    _set_osc(p, st, osc, key, v)
            done[key] = v
        elif key == "quirks":
            st["quirks"] = parse_quirks(v)
            done[key] = list(st["quirks"])
        else:
            _set_host(st, key, v)
            done[key] = v if not isinstance(v, dict) else dict(v)
    return done


def _set_llite(p: Profile, m: dict, key: str, v) -> None:
    tun = m["llite"]["tun"]
    fname = "checksum_pages" if key == "checksums" else key
    if p.llite_tunable_root(fname) is None:
        raise ValueError(f"Lustre {p.version} has no llite {key} (see README: settings per version)")
    if key == "checksums":
        val = _as_bool(key, v)
        tun[key] = val
        for osc in m["osc"]:            # KEY_CHECKSUM through the LOV to every OSC
            osc["checksums"] = val
        return
    if key == "hybrid_io":
        tun[key] = _as_bool(key, v)
        return
    if key.endswith("_bytes"):
        val = _as_int(key, v)
        if not 0 <= val <= HYBRID_THRESHOLD_MAX:
            raise ValueError(f"{key}={val}: at most {HYBRID_THRESHOLD_MAX} (2 GiB)")
        tun[key] = val
        return
    val = _as_int(key, v, MiB)          # *_mb: MiB, or a size with a suffix
    if val < 0:
        raise ValueError(f"{key}: not negative")
    if key == "max_read_ahead_mb" and val > NODE_RAM_GIB * 1024 // 2:
        raise ValueError(f"cannot set max_read_ahead_mb={val} > totalram/2="
                         f"{NODE_RAM_GIB * 1024 // 2}MB")
    if key == "max_read_ahead_per_file_mb" and val > tun["max_read_ahead_mb"]:
        raise ValueError(f"cannot set max_read_ahead_per_file_mb={val} > max_read_ahead_mb="
                         f"{tun['max_read_ahead_mb']}")
    if key == "max_read_ahead_whole_mb" and val > tun["max_read_ahead_per_file_mb"]:
        raise ValueError(f"cannot set max_read_ahead_whole_mb={val} > "
                         f"max_read_ahead_per_file_mb={tun['max_read_ahead_per_file_mb']}")
    tun[key] = val


def _set_osc(p: Profile, st: dict, osc: dict, key: str, v) -> None:
    if key == "osc_checksums":
        osc["checksums"] = _as_bool(key, v)
        return
    val = _as_int(key, v, MiB if key == "max_dirty_mb" else 1)
    if key == "max_pages_per_rpc":
        top = p.max_brw_pages_4k * 4096 // st["page_size"]
        if not 1 <= val <= top:
            raise ValueError(f"max_pages_per_rpc={val}: 1..{top} on Lustre {p.version}")
    elif key == "max_rpcs_in_flight":
        if not 1 <= val <= OSC_MAX_RIF_MAX:
            raise ValueError(f"max_rpcs_in_flight={val}: 1..{OSC_MAX_RIF_MAX}")
    elif key == "max_dirty_mb":
        top = min(OSC_MAX_DIRTY_MB_MAX, NODE_RAM_GIB * 1024 // 4)
        if not 1 <= val <= top:
            raise ValueError(f"max_dirty_mb={val}: 1..{top}")
    osc[key] = val


def _set_host(st: dict, key: str, v) -> None:
    h = st["host"]
    if key == "kernel":
        s = str(v).strip()
        if not s or "\n" in s or " " in s:
            raise ValueError(f"kernel: one word, as uname -r prints it, got {v!r}")
        h["kernel"] = s
    elif key == "os_image":
        if isinstance(v, str) and v.strip().startswith("{"):
            v = json.loads(v)
        if v is None or (isinstance(v, str) and v.strip().lower() == "none"):
            h["os_release"], h["redhat_release"] = None, None
        elif isinstance(v, dict):
            if not v:
                raise ValueError("os_image: an empty dict; use 'none' for no os-release")
            h["os_release"], h["redhat_release"] = _render(v.items()), None
        else:
            h["os_release"], h["redhat_release"] = os_image(str(v))
    else:
        if h.get("os_release") is None:
            raise ValueError(f"{key}: this node has no os-release (set os_image first)")
        s = str(v).strip()
        h["os_release"] = _set_field(h["os_release"], key.upper(), s)


def describe(st: dict) -> dict:
    """The settings in force, per filesystem (for show and tests)."""
    out = {"quirks": list(st.get("quirks", [])), "kernel": st["host"]["kernel"],
           "os_release": st["host"]["os_release"], "fs": {}}
    for name, m in st["mounts"].items():
        o = m["osc"][0] if m["osc"] else {}
        out["fs"][name] = {**m["llite"]["tun"],
                           **{k: o.get(k) for k in ("max_pages_per_rpc", "max_rpcs_in_flight",
                                                    "max_dirty_mb")},
                           "osc_checksums": o.get("checksums")}
    return out
