"""Trace analysis of the harness's run folders.

trace      blkparse a run's blktrace files into a DataFrame of events
attribute  match completions to the bios, and tasks, that queued them
metrics    per-task and per-run fairness numbers over fio's measured window
analyze    one run folder: summary.json fields, tasks.csv, timeseries.csv
plots      gnuplot PNGs
report     a compare folder of runs: CSVs, confidence intervals, markdown
"""
