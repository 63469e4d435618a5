import tomllib
from pathlib import Path

from lustre_jobreport import config

SHIPPED = Path(__file__).resolve().parents[2] / "packaging" / "config.toml"


def _keys(d, prefix=""):
    out = set()
    for k, v in d.items():
        out.add(prefix + k)
        if isinstance(v, dict) and k != "hosts":
            out |= _keys(v, prefix + k + ".")
    return out


def test_shipped_config_lists_every_default_with_its_value():
    raw = tomllib.loads(SHIPPED.read_text())
    assert _keys(raw) == _keys(config.DEFAULTS)          # every setting is documented, none unknown
    assert config.load(SHIPPED).values == config.DEFAULTS  # ... with the built-in value
