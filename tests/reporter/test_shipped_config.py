from pathlib import Path

from lustre_jobreport import config

SHIPPED = Path(__file__).resolve().parents[2] / "packaging" / "config.toml"


def test_shipped_config_states_exactly_the_built_in_defaults():
    assert config.load(SHIPPED).values == config.DEFAULTS
