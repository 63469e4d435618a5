"""lustre-jobreport compare: read both sides' job records, compare them, render the result."""

from __future__ import annotations

import sys

from . import view as comparerender
from .model import NoRecordsError, Settings, compare, needed_columns
from ..present.text import displayable
from ..records import recordset

MAX_WARNINGS = 10      # records and directories skipped, dataset files left out: said on stderr, then a count



def _read_text(info: dict, records_dir, dataset_dir) -> str:
    skipped = info.get("records_skipped", 0)
    dirs = info.get("records_dirs_skipped", 0)
    left_out = info.get("dataset_files_left_out", 0)
    return (f"read {info.get('records_read', 0):,} records from {records_dir or '(no records directory)'} and "
            f"{info.get('dataset_files', 0):,} Parquet files from {dataset_dir or '(no dataset)'}"
            + (f"; {skipped:,} record{'s' if skipped != 1 else ''} skipped, see the warnings" if skipped else "")
            + (f"; {dirs:,} records director{'ies' if dirs != 1 else 'y'} others can write in skipped, "
               "see the warnings" if dirs else "")
            + (f"; {left_out:,} Parquet file{'s' if left_out != 1 else ''} of another schema left out, "
               "see the warnings" if left_out else ""))



def load_side(name: str, text: str, settings: Settings, records_dir, dataset_dir, said: set | None = None):
    """One side's rows (only the columns compare reads: recordset reads no other) and what
    recordset says it read; no matching row is an error naming the selection and what was
    read. The records and directories recordset skipped and the dataset files it left out are
    said on stderr (at most MAX_WARNINGS lines; once, when `said` is shared by the sides: both
    read the same records)."""
    selection = recordset.Selection.parse(text)
    table, info = recordset.load(selection, records_dir, dataset_dir,
                                 columns=needed_columns(settings.group_by))
    warnings = list(info.get("warnings") or [])
    said = set() if said is None else said
    new = [w for w in warnings if w not in said]
    for line in new[:max(0, MAX_WARNINGS - len(said))]:
        _warn(line)
    if len(said) < MAX_WARNINGS < len(said) + len(new):
        _warn(f"... and {len(said) + len(new) - MAX_WARNINGS} more records or directories skipped "
              "or files left out")
    said.update(new)
    if table.num_rows == 0:
        raise NoRecordsError(f"no job records match the {name} selection {text!r} "
                             f"({_read_text(info, records_dir, dataset_dir)})")
    info = ({k: v for k, v in info.items() if k not in ("warnings", "records_skipped")}
            | {"skipped": info.get("records_skipped", 0)})
    return table.select(list(needed_columns(settings.group_by))), info   # not the selection's own



def _warn(line: str) -> None:
    print(f"lustre-jobreport: warning: {displayable({'l': line})['l']}", file=sys.stderr)



def overlap(baseline, candidate) -> int:
    """How many of the candidate's jobs the baseline selected too (a job in both counts on both
    sides and pulls them together: the selections should not overlap)."""
    import pyarrow.compute as pc
    both = pc.is_in(candidate["record_id"], value_set=pc.unique(baseline["record_id"]))
    return len(pc.unique(pc.filter(candidate["record_id"], both)))



def main(args, cfg) -> str:
    """The comparison the command line asked for, rendered (cli writes it out)."""
    settings = Settings.of(cfg.values["compare"], getattr(args, "by", None), getattr(args, "coarsen", None))
    records_dir = args.records or cfg.values["hooks"]["records_dir"]
    dataset_dir = args.dataset or cfg.values["records"]["dataset_dir"]
    # one side at a time, only the columns compare reads (recordset reads no other)
    said: set[str] = set()
    bt, bi = load_side("baseline", args.baseline, settings, records_dir, dataset_dir, said)
    ct, ci = load_side("candidate", args.candidate, settings, records_dir, dataset_dir, said)
    if (shared := overlap(bt, ct)):
        _warn(f"{shared:,} job{'s' if shared != 1 else ''} match both the baseline and the candidate "
              f"selection and count on both sides: make the selections disjoint")
    result = compare(bt, ct, settings, baseline_selection=args.baseline, candidate_selection=args.candidate,
                     baseline_info=bi, candidate_info=ci)
    return comparerender.render(result, args.format)
