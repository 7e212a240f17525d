"""PNG plots through gnuplot: each plot leaves <stem>.dat, <stem>.gp, <stem>.png.

The data and the script stay next to the PNG so that anyone can check what
was drawn and draw it again (gnuplot <stem>.gp, from that folder).
"""

import os
import subprocess

import numpy as np
import pandas as pd

from analysis import files

HEADER = """set terminal pngcairo size {width},{height} noenhanced font ",10"
set output '{png}'
set datafile separator "\\t"
set datafile missing "NaN"
set title '{title}'
set grid ytics
set key outside right top
"""
MANY = 12    # more series than this and the key is left out


def write_dat(path, frame):
    with files.replacing(path) as tmp:
        frame.to_csv(tmp, sep="\t", index=False, na_rep="NaN", float_format="%.6g")


def render(stem, script, data, title, width=900, height=500):
    """Write data {suffix: frame} and the script, run gnuplot; returns the PNG path."""
    folder, name = os.path.split(stem)
    for suffix, frame in data.items():
        write_dat(stem + suffix + ".dat", frame)
    png = stem + ".png"
    text = HEADER.format(width=width, height=height, png=name + ".png",
                         title=quoted(title)) + script
    with open(stem + ".gp", "w") as f:
        f.write(text)
    subprocess.run(["gnuplot", name + ".gp"], cwd=folder or ".", check=True,
                   capture_output=True, text=True)
    return png


def key_line(count):
    return "set key off\n" if count > MANY else ""


def shares(stem, table, expected, title):
    """Stacked share bars, one per scheduler, with the expected shares marked.

    table: rows are schedulers (index), columns tasks, values shares;
    expected: share per task (NaN when the workload names none).
    """
    name = os.path.basename(stem)
    bars = table.reset_index()
    n = len(table.columns)
    script = key_line(n) + (
        "set style data histograms\nset style histogram rowstacked\n"
        "set style fill solid 0.85 border -1\nset boxwidth 0.6\n"
        # Many long bar names ("mq-deadline depth 1023") overlap when level.
        "set xtics rotate by 30 right\n"
        "set yrange [0:1.05]\nset ylabel 'share of IOPS among the jobs'\n"
        "plot for [i=2:%d] '%s.dat' using i:xtic(1) title columnheader(i)" % (n + 1, name))
    data = {"": bars}
    marks = expected_marks(expected, len(table))
    if not marks.empty:
        data["-expected"] = marks
        script += (", \\\n     '%s-expected.dat' using ($1-0.4):2:(0.8):(0) with vectors "
                   "nohead dt 2 lw 2 lc rgb 'black' title 'expected'" % name)
    return render(stem, script + "\n", data, title)


def expected_marks(expected, bars):
    """(bar, cumulative expected share) for every boundary inside each bar."""
    cumulative = pd.Series(expected, dtype=float).cumsum().iloc[:-1]
    if cumulative.isna().any() or cumulative.empty:
        return pd.DataFrame(columns=["bar", "expected"])
    rows = [(bar, y) for bar in range(bars) for y in cumulative]
    return pd.DataFrame(rows, columns=["bar", "expected"])


def iops_over_time(stem, series, title):
    """Lines of IOPS per second, one per task; series has second, task, iops."""
    name = os.path.basename(stem)
    wide = series.pivot(index="second", columns="task", values="iops")
    wide = wide[list(dict.fromkeys(series["task"]))].reset_index()
    n = len(wide.columns) - 1
    script = key_line(n) + (
        "set xlabel 'second of the measured window'\nset ylabel 'IOPS'\nset yrange [0:*]\n"
        "plot for [i=2:%d] '%s.dat' using 1:i with linespoints pt 7 ps 0.4 "
        "title columnheader(i)\n" % (n + 1, name))
    return render(stem, script, {"": wide}, title)


def p99_bars(stem, means, errors, title):
    """p99 latency bars per task, a cluster per task, a bar per scheduler.

    means and errors: rows tasks (index), columns schedulers; errors are the
    95% confidence half-widths, drawn as error bars (0 where unknown).
    """
    name = os.path.basename(stem)
    columns = {"task": means.index}
    for config in means.columns:
        columns[config] = means[config].to_numpy()
        columns[config + " ci"] = errors[config].fillna(0).to_numpy()
    frame = pd.DataFrame(columns)
    k = len(means.columns)
    script = (
        "set style data histograms\nset style histogram errorbars gap 1 lw 1\n"
        "set style fill solid 0.85 border -1\nset ylabel 'p99 Q2C latency (ms)'\n"
        "set yrange [0:*]\nset xtics rotate by -45\n"
        "plot for [k=0:%d] '%s.dat' using (column(2+2*k)):(column(3+2*k)):xtic(1) "
        "title columnheader(2+2*k)\n" % (k - 1, name))
    width = int(np.clip(120 + 40 * len(means) * k, 900, 2400))
    return render(stem, script, {"": frame}, title, width=width)


def by_depth(stem, shares, conservation, title):
    """Each task's share against device depth, a panel per configuration,
    and below each panel its work conservation against depth; x is log.

    shares: {panel label: frame indexed by depth whose columns are, per
    task, its share and then that share's 95% half-width}; conservation:
    the same with a column pair per panel label.  A missing half-width
    (one run) draws no bar; a missing share (no run at that depth) no point.
    """
    name = os.path.basename(stem)
    labels = list(shares)
    depths = sorted(set().union(*(frame.index for frame in shares.values())))
    tasks = len(next(iter(shares.values())).columns) // 2
    data = {"-wc": with_bars(conservation)}
    script = ("set multiplot layout 2,%d title '%s'\nset logscale x 2\nset xtics (%s)\n"
              "set xrange [%g:%g]\nset xlabel 'device depth (nvme.io_queue_depth)'\n"
              % (len(labels), quoted(title), ", ".join(str(d) for d in depths),
                 depths[0] / 1.5, depths[-1] * 1.5))
    # The first panel's key names the tasks for all: a task has its colour in each.
    script += "set key inside top right\n" if tasks <= MANY else "set key off\n"
    script += "set yrange [0:1.05]\nset ylabel 'share of the jobs'' IOPS'\n"
    for k, label in enumerate(labels):
        data["-p%d" % (k + 1)] = with_bars(shares[label])
        script += ("set title '%s'\nplot for [i=0:%d] '%s-p%d.dat' using 1:(column(2+2*i)):"
                   "(column(3+2*i)) with yerrorlines pt 7 lc (i+1) title columnheader(2+2*i)\n"
                   "unset key\n" % (quoted(label), tasks - 1, name, k + 1))
    script += "set yrange [0:1.2<*]\nset ylabel 'work conservation'\n"
    for k, label in enumerate(labels):
        if conservation[label].isna().all():
            # No throttle (IOPS=off): no work conservation, an empty panel.
            script += "set multiplot next\n"
            continue
        script += ("set title '%s: work conservation'\nplot '%s-wc.dat' using 1:%d:%d "
                   "with yerrorlines pt 7 lc rgb 'black' notitle\n"
                   % (quoted(label), name, 2 + 2 * k, 3 + 2 * k))
    width = max(900, 100 + 320 * len(labels))
    return render(stem, script + "unset multiplot\n", data, title, width=width, height=750)


def with_bars(frame):
    """A by_depth frame as its .dat: depth first, no half-width missing."""
    out = frame.copy()
    out.iloc[:, 1::2] = out.iloc[:, 1::2].fillna(0)
    return out.rename_axis("depth").reset_index()


def quoted(text):
    """text inside a gnuplot single-quoted string."""
    return text.replace("'", "''")


def vios(stem, data, title):
    """FIOPS's vios per task against trace time, and below it each task's
    lead over its class's min_vios (what it was charged ahead of the tree).

    data: schedmsg.vios_table(), one row per dispatch message; a task is a
    "series" number with a "label".  One pass over the file colours each
    point by its series; the key comes from empty plots of those colours.
    """
    name = os.path.basename(stem)
    names = data.drop_duplicates("series").sort_values("series")
    vios_col, lead_col = (data.columns.get_loc(c) + 1 for c in ("vios", "lead"))
    key = "".join(", \\\n     NaN with points pt 7 lc %d title '%s'"
                  % (row.series + 1, quoted(row.label)) for row in names.itertuples())

    def panel(column):
        return ("plot '%s.dat' using 1:%d:($2+1) with points pt 7 ps 0.3 lc variable notitle"
                % (name, column) + key + "\n")

    script = key_line(len(names)) + (
        "set multiplot layout 2,1\nset xlabel 'trace time (s)'\n"
        "set ylabel 'vios after the charge'\nset format y '%.1s%c'\n" + panel(vios_col)
        + "set title 'lead: vios - min_vios of its class, after the charge'\n"
        "set ylabel 'lead'\nset format y '%g'\n" + panel(lead_col) + "unset multiplot\n")
    return render(stem, script, {"": data}, title, height=800)


def depth(stem, data, window, title):
    """FIOPS's dispatch depth and steady depth against trace time, as steps
    (a value holds until the next message), probes as points, and the
    measured window between dashed lines; y is log 2, as the start-up
    depth (max_depth) is far above the steady one.

    data: depthmsg.depth_table(); window: (start, end) in trace time.
    """
    name = os.path.basename(stem)
    depth_col, steady_col, probe_col = (data.columns.get_loc(c) + 1
                                        for c in ("depth", "steady", "probe"))
    marks = "".join("set arrow from %g, graph 0 to %g, graph 1 nohead dt 2 lc rgb 'gray'\n"
                    % (t, t) for t in window)
    script = marks + (
        "set xlabel 'trace time (s)'\nset ylabel 'requests in the driver'\n"
        "set logscale y 2\nset yrange [0.8:*]\n"
        "plot '{0}.dat' using 1:{1} with steps lw 1 title 'depth', \\\n"
        "     '' using 1:{2} with steps lw 2 title 'steady', \\\n"
        "     '' using 1:(${3} > 0 ? ${1} : NaN) with points pt 7 ps 0.6 title 'probe'\n"
        .format(name, depth_col, steady_col, probe_col))
    return render(stem, script, {"": data}, title)


def heat_map(stem, frame, title, low=0.3):
    """A coloured box per row (index) and column of frame, its value
    printed on it; red at low and below, green at 1; a missing value is a
    blank box.  Boxes rather than "with image", which draws nothing below
    2 x 2 cells."""
    name = os.path.basename(stem)
    cells = [(x, y, frame.iat[y, x]) for y in range(len(frame)) for x in range(len(frame.columns))]
    data = pd.DataFrame(cells, columns=["x", "y", "value"])
    data["label"] = data["value"].map(lambda v: "" if pd.isna(v) else "%.2f" % v)
    xtics = ", ".join("'%s' %d" % (quoted(c), i) for i, c in enumerate(frame.columns))
    ytics = ", ".join("'%s' %d" % (quoted(str(r)), i) for i, r in enumerate(frame.index))
    script = (
        "set palette defined (0 'red', 0.6 'yellow', 1 'forest-green')\n"
        "set cbrange [%g:1]\nset cblabel 'Jain index'\nunset grid\nset tics scale 0\n"
        "set xtics (%s) rotate by -45\nset ytics (%s)\n"
        "set xrange [-0.5:%g]\nset yrange [%g:-0.5]\nset style fill solid 1.0 noborder\n"
        "plot '%s.dat' using 1:2:(0.5):(0.5):3 with boxxyerror fc palette notitle, \\\n"
        "     '' using 1:2:4 with labels font ',8' notitle\n"
        % (low, xtics, ytics, len(frame.columns) - 0.5, len(frame) - 0.5, name))
    width = int(np.clip(250 + 60 * len(frame.columns), 900, 2000))
    height = int(np.clip(200 + 40 * len(frame), 400, 1200))
    return render(stem, script, {"": data}, title, width=width, height=height)
