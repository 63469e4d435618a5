"""A job's start and end parse their command line with the hook's subcommand alone (building
every subcommand's parser cost the prolog milliseconds): whatever the command line, that
parser reads it exactly as the whole command line's parser does."""

from hypothesis import given, settings, strategies as st

from lustre_jobreport import cli

WORDS = st.sampled_from(["prolog", "epilog", "report", "snapshot", "x.toml", "--", "7.pbs01", "a b"])
HOOK_OPTIONS = st.lists(st.one_of(
    st.tuples(st.just("--scheduler"), st.sampled_from(["slurm", "pbs"])),
    st.tuples(st.just("--log"), st.sampled_from(["syslog", "/var/log/ljr.log"])),
    st.tuples(st.just("--bound"), st.sampled_from(["5", "29.5", "7.0"])),
    st.tuples(st.just("--limits")),
), max_size=4)


@st.composite
def hook_command_lines(draw):
    argv = []
    if draw(st.booleans()):
        argv += ["--config", draw(WORDS.filter(lambda w: w != "--"))]   # a config named like a command, too
    argv.append(draw(st.sampled_from(cli.HOOKS)))
    for option in draw(HOOK_OPTIONS):
        argv += option
    if draw(st.booleans()):
        argv.append("--")
    return argv + draw(st.lists(WORDS, max_size=3))


def parsed(p, argv):
    try:
        return vars(p.parse_args(argv))
    except SystemExit as exc:          # a command line both refuse, the same way
        return ("refused", exc.code)


@settings(max_examples=400, deadline=None)
@given(hook_command_lines())
def test_the_hook_parser_reads_a_hook_command_line_as_the_whole_parser_does(argv):
    assert cli._command_of(argv) in cli.HOOKS
    assert parsed(cli.parser(cli._command_of(argv)), argv) == parsed(cli.parser(), argv)


def test_other_command_lines_get_the_whole_parser():
    for argv in (["report", "b.json", "e.json"], ["--config", "prolog", "report"], ["--version"], []):
        assert cli._command_of(argv) not in cli.HOOKS
        assert parsed(cli.parser(cli._command_of(argv)), argv) == parsed(cli.parser(), argv)
