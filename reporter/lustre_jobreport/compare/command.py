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



def load_sides(sides: dict[str, str], settings: Settings, records_dir, dataset_dir) -> list[tuple]:
    """Each side's rows (only the columns compare reads: recordset reads no other) and what
    recordset says it read, `sides` (name: selection) read in one pass; a side no row matches
    is an error naming its selection and what was read. The records and directories recordset
    skipped and the dataset files it left out are said on stderr once for all sides (at most
    MAX_WARNINGS lines), and so are the jobs more than one side selected (they count on each)."""
    columns = needed_columns(settings.group_by)
    each = recordset.load_each([recordset.Selection.parse(text) for text in sides.values()],
                               records_dir, dataset_dir, columns=columns)
    _say_warnings(dict.fromkeys(w for one in each.sides for w in one.warnings))
    if (shared := each.shared_jobs):
        _warn(f"{shared:,} job{'s' if shared != 1 else ''} match both the baseline and the candidate "
              f"selection and count on both sides: make the selections disjoint")
    out = []
    for (name, text), one in zip(sides.items(), each.sides):
        info = one.info()
        if one.table.num_rows == 0:
            raise NoRecordsError(f"no job records match the {name} selection {text!r} "
                                 f"({_read_text(info, records_dir, dataset_dir)})")
        info = ({k: v for k, v in info.items() if k not in ("warnings", "records_skipped")}
                | {"skipped": info.get("records_skipped", 0)})
        out.append((one.table.select(list(columns)), info))   # not the selection's own columns
    return out



def _say_warnings(lines) -> None:
    lines = list(lines)
    for line in lines[:MAX_WARNINGS]:
        _warn(line)
    if len(lines) > MAX_WARNINGS:
        _warn(f"... and {len(lines) - MAX_WARNINGS} more records or directories skipped or files left out")



def _warn(line: str) -> None:
    print(f"lustre-jobreport: warning: {displayable({'l': line})['l']}", file=sys.stderr)



def main(args, cfg) -> str:
    """The comparison the command line asked for, rendered (cli writes it out)."""
    settings = Settings.of(cfg.values["compare"], getattr(args, "by", None), getattr(args, "coarsen", None))
    records_dir = args.records or cfg.values["hooks"]["records_dir"]
    dataset_dir = args.dataset or cfg.values["records"]["dataset_dir"]
    (bt, bi), (ct, ci) = load_sides({"baseline": args.baseline, "candidate": args.candidate}, settings,
                                    records_dir, dataset_dir)
    result = compare(bt, ct, settings, baseline_selection=args.baseline, candidate_selection=args.candidate,
                     baseline_info=bi, candidate_info=ci)
    return comparerender.render(result, args.format)
