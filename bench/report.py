#!/usr/bin/env python3
"""bench/report.py: summarise one benchmark results directory.

Usage: python3 bench/report.py RESULTS_DIR
       python3 bench/report.py --regimes-chart OUT.png [--variant NAME] SOURCE [SOURCE ...]

Reads RESULTS_DIR/raw.csv (round,workload,variant,metric,value; round 0 is
the warm-up and is ignored) and RESULTS_DIR/meta.tsv (key<TAB>value), and
writes:

  summary.csv  one row per (workload, metric, variant): rounds, median, min,
               max, and the ratio variant/btree computed per round (same
               round, same workload) then summarised as median, min, max;
               for probe-text-*, also the ratio to the core btree of the
               variant's own collation (ratio2_*; ratio2_ref names that
               btree: btree for "C", btree-icu for ICU's "en-x-icu",
               btree-libc for libc's "en_US.utf8"), from the variants'
               definitions in meta.tsv ("text variant <name>"; a results
               directory without them: the ratio to btree-icu)
  report.md    the Markdown report (results table, setup, chart; with
               --baseline, each variant's per-round ratio to its twin
               "<variant>-base")
  ratios.png   ratio to btree per workload and variant, bars at the median
               ratio, error bars from the min to the max ratio

With --regimes-chart it writes only OUT.png: the regimes of the README's
table (*When it helps, and when it does not*: probe-nl, probe-part<N>,
probe-tables, probe-big, probe-100m, select-connect, write-mix,
probe-uuid, probe-composite, probe-text-*, probe-batch, probe-inlist-*,
probe-skip, select-mix, range-mix; REGIMES below), one row per regime,
one point per run: the median of btlayout's per-round ratio to core
btree with a bar from the lowest to the highest round, a line at 1.0.
Each SOURCE is a results directory (its summary.csv and meta.tsv) or a
summary CSV file, optionally named LABEL=SOURCE.  A run's label is LABEL,
else the server version and huge pages from meta.tsv, else the directory's
name; labels that differ only in huge pages share a colour (filled: huge
pages, hollow: no huge pages), and select-connect of a run with meta.tsv's
"preload" gets a row of its own.  A run's scale (meta.tsv's, else 100)
picks the row of a regime that names its number of keys: probe-nl of
--scale 30 is the first of the normalized-key rows, not the 10M-key
regime.  A summary CSV may carry three more columns, run (the label of
each row), preload (true or false) and scale, to hold several runs in one
file (docs/img/regimes.csv does).  The variant charted is the one a
regime names (the normalized-key rows of text in each collation, drawn
against the core btree of that collation), else NAME, else the first of
btlayout-blocked, btlayout-bin-blocked and btlayout that the source has.
Rows without a ratio_median but with ratio_min and ratio_max are drawn as
a bar without a point.

Standard library only, plus matplotlib for the charts (skipped with a note
when matplotlib is missing; --regimes-chart fails without it).
"""

import argparse
import csv
import os
import re
import statistics
import textwrap
import sys
from collections import OrderedDict, defaultdict

BASELINE = "btree"
# probe-text-*: BASELINE is core btree under "C"; the second ratio is each
# variant's to the core btree of its own collation (text_references), or,
# for results without the variants' definitions in meta.tsv, to BASELINE2
# (core btree in the database default collation, as runs before the
# collations were named had it).
BASELINE2 = "btree-icu"
WORKLOAD_ORDER = ["probe-nl", "probe-ins-*", "probe-uuid", "probe-composite", "probe-comp-ins-*", "probe-text-*",
                  "probe-part*", "probe-tables", "probe-big", "probe-100m", "probe-inlist*", "probe-skip", "probe-batch",
                  "select", "select-mix", "select-connect", "range", "range-mix", "write", "write-mix", "build", "build-*",
                  "load"]
# probe-text: the target of the BIN-collation issue, btlayout / btree "C"
TEXT_TARGET = 1.5
# The metrics of the workloads with tables of their own (probe-text-*,
# probe-uuid, probe-composite, the regimes of bench/lib/regimes.sh), lookups
# first
OWN_TABLE_METRIC_ORDER = ["lookups_per_s", "conn_rate", "wall_s", "text_build_s", "uuid_build_s", "comp_build_s",
                          "regime_build_s", "text_size_mb", "uuid_size_mb", "comp_size_mb", "regime_size_mb",
                          "laid_out_pct", "uniform_width_pct"]
OWN_TABLE_WORKLOADS = ["probe-text-*", "probe-uuid", "probe-composite", "probe-part*", "probe-tables", "probe-big", "probe-100m",
                       "select-connect", "probe-inlist*", "probe-skip"]

# metric -> (label, higher_is_better, in the chart)
METRICS = {
    "lookups_per_s": ("lookups/s", True, True),
    "wall_s": ("wall time (s)", False, False),
    "tps": ("TPS", True, True),
    "build_s": ("CREATE INDEX on write_t (s)", False, True),
    "build_probe_s": ("CREATE INDEX on probe_t (s)", False, True),
    "build_accounts_s": ("CREATE INDEX on pgbench_accounts (s)", False, False),
    "size_mb": ("index size on probe_t (MB)", False, True),
    "relayout_s": ("btlayout_relayout() after the run (s)", False, False),
    "relayout_pages": ("pages rewritten by btlayout_relayout()", False, False),
    "laid_out_pct": ("pages in layout (%)", True, False),
    "inserted_since_pct": ("pages in layout with inserts since (%)", True, False),
    "out_of_layout_pct": ("pages out of layout (%)", False, False),
    "uniform_width_pct": ("pages of uniform key width (%)", True, False),
    "text_build_s": ("CREATE INDEX (s)", False, True),
    "large_build_s": ("CREATE INDEX (s)", False, True),
    "text_size_mb": ("index size (MB)", False, False),
    "uuid_build_s": ("CREATE INDEX (s)", False, True),
    "uuid_size_mb": ("index size (MB)", False, False),
    "comp_build_s": ("CREATE INDEX (s)", False, True),
    "comp_size_mb": ("index size (MB)", False, False),
    "regime_build_s": ("CREATE INDEX, all its tables (s)", False, False),
    "regime_size_mb": ("index size, all its tables (MB)", False, False),
    "conn_rate": ("new connection + SELECT per s (1e6 / mean us)", True, True),
}

# metric prefix -> label of the metrics measured per client count (<prefix>Nc):
# TPS of select; 1e6 / mean statement latency of select-mix and range-mix
PER_CLIENT_METRICS = {"tps_": "TPS", "rate_": "1 / mean latency (per s)"}


def workload_rank(w):
    for i, pat in enumerate(WORKLOAD_ORDER):
        if w == pat or (pat.endswith("*") and w.startswith(pat[:-1])):
            return i
    return len(WORKLOAD_ORDER)


def metric_info(metric):
    if metric in METRICS:
        return METRICS[metric]
    for prefix, label in PER_CLIENT_METRICS.items():
        if metric.startswith(prefix) and metric.endswith("c"):
            clients = metric[len(prefix):-1]
            return ("%s, %s client%s" % (label, clients, "" if clients == "1" else "s"), True, True)
    return (metric, True, True)


def fmt(x):
    if x is None:
        return "-"
    ax = abs(x)
    if ax >= 1000:
        return "{:,.0f}".format(x)
    if ax >= 100:
        return "{:.0f}".format(x)
    if ax >= 10:
        return "{:.1f}".format(x)
    return "{:.3g}".format(x)


def fmt_ratio(med, lo, hi):
    if med is None:
        return "-"
    return "%.3f [%.3f-%.3f]" % (med, lo, hi)


def read_meta(path):
    meta = OrderedDict()
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                if not line:
                    continue
                key, _, value = line.partition("\t")
                meta[key] = value
    return meta


def read_raw(path):
    rows = []
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            rows.append(
                (int(row["round"]), row["workload"], row["variant"], row["metric"], float(row["value"]))
            )
    return rows


def round_values(rows):
    """-> ({(workload, metric, variant): {round: value}}, those keys in the
    order of the raw rows); the warm-up round 0 left out."""
    values = defaultdict(dict)
    order = []
    for rnd, w, v, m, x in rows:
        if rnd == 0:
            continue
        values[(w, m, v)][rnd] = x
        if (w, m, v) not in order:
            order.append((w, m, v))
    return values, order


def collation_key(name):
    """A collation name as pg_collation spells it: "x" -> x, X -> x."""
    if name.startswith('"') and name.endswith('"'):
        return name[1:-1]
    return name.lower()


def text_references(meta):
    """-> ({text variant: its reference}, {text variant: its collation}):
    the reference is the core btree variant (USING btree) in the variant's
    collation, None if the run has none; from meta.tsv's "text variant
    <name>" lines (the definition, then "probes joined on p.k = q.k
    [COLLATE x]").  Empty without such lines."""
    colls, ams = OrderedDict(), {}
    for key, value in meta.items():
        if not key.startswith("text variant "):
            continue
        v = key[len("text variant "):]
        m = re.search(r'probes joined on p\.k = q\.k(?: COLLATE ("[^"]+"|[A-Za-z0-9_]+))?', value)
        colls[v] = collation_key(m.group(1)) if m and m.group(1) else "default"
        a = re.match(r"\s*USING\s+(\w+)", value)
        ams[v] = a.group(1) if a else None
    by_coll = {}
    # btree first: the reference of "C" whatever other btree it shares it with
    for v in sorted(colls, key=lambda x: x != BASELINE):
        if ams[v] == "btree" and not v.endswith("-base"):
            by_coll.setdefault(colls[v], v)
    return OrderedDict((v, by_coll.get(c)) for v, c in colls.items()), colls


def summarise(rows, refs=None):
    """-> list of dicts, one per (workload, metric, variant), report order.
    refs: text_references()'s variant -> reference, for probe-text-*'s
    second ratio (without: BASELINE2)."""
    values, order = round_values(rows)
    variants = []
    keys = []
    for w, m, v in order:
        if v not in variants:
            variants.append(v)
        if (w, m) not in keys:
            keys.append((w, m))

    first = {}
    for i, (w, m) in enumerate(keys):
        first.setdefault(w, i)

    def key_order(wm):
        # probe-text-*: dataset by dataset; it, probe-uuid and
        # probe-composite lookups first;
        # otherwise the order of the raw rows
        w, m = wm
        own = any(w == p or (p.endswith("*") and w.startswith(p[:-1])) for p in OWN_TABLE_WORKLOADS)
        mr = OWN_TABLE_METRIC_ORDER.index(m) if own and m in OWN_TABLE_METRIC_ORDER else 0
        return (workload_rank(w), first[w], mr, keys.index(wm))

    # The references first: btree, then the btree of each other collation
    firsts = [BASELINE] + [r for r in (refs.values() if refs else [BASELINE2]) if r and r != BASELINE]
    for b in reversed(list(OrderedDict.fromkeys(firsts))):
        if b in variants:
            variants.remove(b)
            variants.insert(0, b)
    out = []
    for w, m in sorted(keys, key=key_order):
        base = values.get((w, m, BASELINE), {})
        for v in variants:
            per_round = values.get((w, m, v))
            if not per_round:
                continue
            xs = list(per_round.values())
            ratios = [per_round[r] / base[r] for r in sorted(per_round) if r in base and base[r] != 0]
            ref2 = None
            if w.startswith("probe-text-"):
                ref2 = refs.get(v) if refs else BASELINE2
            base2 = values.get((w, m, ref2), {}) if ref2 else {}
            ratios2 = [per_round[r] / base2[r] for r in sorted(per_round) if r in base2 and base2[r] != 0]
            label, higher, in_chart = metric_info(m)
            out.append(
                {
                    "workload": w,
                    "metric": m,
                    "variant": v,
                    "rounds": len(xs),
                    "median": statistics.median(xs),
                    "min": min(xs),
                    "max": max(xs),
                    "ratio_median": statistics.median(ratios) if ratios else None,
                    "ratio_min": min(ratios) if ratios else None,
                    "ratio_max": max(ratios) if ratios else None,
                    "ratio2_median": statistics.median(ratios2) if ratios2 else None,
                    "ratio2_min": min(ratios2) if ratios2 else None,
                    "ratio2_max": max(ratios2) if ratios2 else None,
                    "ratio2_ref": ref2 if ratios2 else None,
                    "higher_is_better": higher,
                    "label": label,
                    "in_chart": in_chart,
                }
            )
    return out


def write_summary_csv(path, summary):
    cols = ["workload", "metric", "variant", "rounds", "median", "min", "max",
            "ratio_median", "ratio_min", "ratio_max", "higher_is_better",
            "ratio2_median", "ratio2_min", "ratio2_max", "ratio2_ref"]
    with open(path, "w", newline="", encoding="utf-8") as f:
        wr = csv.writer(f)
        wr.writerow(cols)
        for s in summary:
            wr.writerow(["" if s[c] is None else (round(s[c], 6) if isinstance(s[c], float) else s[c])
                         for c in cols])


def draw_chart(path, summary):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no chart"
    items = [s for s in summary if s["in_chart"] and s["ratio_median"] is not None]
    groups = []
    for s in items:
        g = (s["workload"], s["metric"])
        if g not in groups:
            groups.append(g)
    variants = []
    for s in items:
        if s["variant"] != BASELINE and s["variant"] not in variants:
            variants.append(s["variant"])
    if not groups or not variants:
        return "nothing to chart (no variant besides %s)" % BASELINE
    by = {(s["workload"], s["metric"], s["variant"]): s for s in items}
    # Small multiples: one panel per (workload, metric), one horizontal bar
    # per variant (median ratio), error bar from the min to the max ratio.
    ncols = min(3, len(groups))
    nrows = (len(groups) + ncols - 1) // ncols
    panel_h = 0.32 * len(variants) + 1.0
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, panel_h * nrows + 0.8),
                             squeeze=False)
    cmap = plt.get_cmap("tab10")
    colors = {v: cmap(i % 10) for i, v in enumerate(variants)}
    for gi, (w, m) in enumerate(groups):
        ax = axes[gi // ncols][gi % ncols]
        names, meds, lo, hi, cols = [], [], [], [], []
        for v in variants:
            s = by.get((w, m, v))
            if s is None:
                continue
            names.append(v)
            meds.append(s["ratio_median"])
            lo.append(s["ratio_median"] - s["ratio_min"])
            hi.append(s["ratio_max"] - s["ratio_median"])
            cols.append(colors[v])
        ys = list(range(len(names)))[::-1]
        ax.barh(ys, meds, 0.7, xerr=[lo, hi], capsize=3, color=cols, error_kw={"elinewidth": 1})
        for y, x, h in zip(ys, meds, hi):
            ax.text(x + h, y, "  %.2f" % x, va="center", ha="left", fontsize=7)
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set_yticks(ys)
        ax.set_yticklabels(names, fontsize=8)
        label, higher, _ = metric_info(m)
        ax.set_title("%s: %s %s" % (w, label, "\u2191" if higher else "\u2193"), fontsize=9)
        # Each panel its own scale (a 6x build time would flatten the
        # lookups); the line at 1 is the reference in all of them.
        ax.set_xlim(0, max([1.0] + [m_ + h_ for m_, h_ in zip(meds, hi)]) * 1.18)
        ax.tick_params(axis="x", labelsize=7)
        ax.grid(axis="x", alpha=0.3)
    for gi in range(len(groups), nrows * ncols):
        axes[gi // ncols][gi % ncols].axis("off")
    fig.suptitle("Ratio to core %s (probe-text: under COLLATE \"C\"), same round: bar = median over rounds, "
                 "error bar = min-max\n\u2191 higher is better, \u2193 lower is better" % BASELINE, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return None


def headline(summary, meta):
    """One sentence per non-baseline variant on the probe-nl lookups."""
    lines = []
    base = next((s for s in summary if s["workload"] == "probe-nl" and s["metric"] == "lookups_per_s"
                 and s["variant"] == BASELINE), None)
    if base is None:
        return lines
    wall = next((s for s in summary if s["workload"] == "probe-nl" and s["metric"] == "wall_s"
                 and s["variant"] == BASELINE), None)
    lines.append("**Headline, probe-nl** (%s): core btree %s lookups/s (%s s, %.2f us per probe)." % (
        meta.get("probe-nl", "nested-loop probes"), fmt(base["median"]),
        fmt(wall["median"]) if wall else "?", 1e6 / base["median"]))
    for s in summary:
        if s["workload"] == "probe-nl" and s["metric"] == "lookups_per_s" and s["variant"] != BASELINE:
            lines.append("- %s: %s lookups/s, **%.3fx** btree (per-round ratios %.3f-%.3f)" % (
                s["variant"], fmt(s["median"]), s["ratio_median"], s["ratio_min"], s["ratio_max"]))
    return lines


def headline_text(summary, colls=None):
    """probe-text: per dataset, the references and every variant's ratios to
    btree "C" and to the core btree of its own collation (colls: variant ->
    collation, from text_references; without it the second ratio is to
    BASELINE2), the best btlayout variant of each collation, and whether
    the best "C" one reaches TEXT_TARGET."""
    lines = []
    rows = [s for s in summary if s["workload"].startswith("probe-text-") and s["metric"] == "lookups_per_s"]
    datasets = []
    for s in rows:
        if s["workload"] not in datasets:
            datasets.append(s["workload"])
    if not datasets:
        return lines
    colls = colls or {}
    refs = {BASELINE, BASELINE2} | {s["ratio2_ref"] for s in rows if s["ratio2_ref"]}
    second = "ratio to the btree of its collation" if colls else "ratio to %s" % BASELINE2
    lines += ["", "**Headline, probe-text** (lookups/s, median; ratios per round, median [min-max]: to core btree "
              "under COLLATE \"C\", and to core btree in the variant's own collation, the comparison that counts "
              "for it; target %.1fx btree \"C\" for the \"C\" variants):" % TEXT_TARGET, "",
              "| dataset | variant | collation | lookups/s | ratio to btree \"C\" | %s |" % second,
              "|---|---|---|---:|---|---|"]
    for w in datasets:
        first = True
        best = OrderedDict()  # reference -> the variant of the best ratio to it
        for s in rows:
            if s["workload"] != w:
                continue
            v = s["variant"]
            r1 = "1" if v == BASELINE else fmt_ratio(s["ratio_median"], s["ratio_min"], s["ratio_max"])
            r2 = "1" if v == s["ratio2_ref"] else fmt_ratio(s["ratio2_median"], s["ratio2_min"], s["ratio2_max"])
            if v not in refs and s["ratio2_median"] is not None:
                r2 = "**%s**" % r2
                b = best.get(s["ratio2_ref"])
                if b is None or s["ratio2_median"] > b["ratio2_median"]:
                    best[s["ratio2_ref"]] = s
            coll = colls.get(v)
            lines.append("| %s | %s | %s | %s | %s | %s |" % (
                w[len("probe-text-"):] if first else "", v, '"%s"' % coll if coll and coll != "default" else
                (coll or "-"), fmt(s["median"]), r1, r2))
            first = False
        for ref, b in best.items():
            coll = colls.get(b["variant"])
            target = ""
            if ref == BASELINE:
                target = ": target %.1fx %s" % (TEXT_TARGET, "met" if b["ratio2_median"] >= TEXT_TARGET else "not met")
            lines.append("| | best%s: %s | | | | %.2fx %s%s |" % (
                ' in "%s"' % coll if coll else "", b["variant"], b["ratio2_median"], ref, target))
    return lines


def baseline_ab(rows):
    """--baseline: each variant against its twin "<variant>-base" (the same
    index, another commit's btlayout.so), ratio per round, median [min-max]."""
    values, order = round_values(rows)
    lines = []
    for w, m, v in order:
        twin = values.get((w, m, v + "-base"))
        if v.endswith("-base") or not twin:
            continue
        mine = values[(w, m, v)]
        ratios = [mine[r] / twin[r] for r in sorted(mine) if r in twin and twin[r] != 0]
        if not ratios:
            continue
        label, higher, _ = metric_info(m)
        lines.append("| %s | %s %s | %s | %s |" % (
            w, label, "\u2191" if higher else "\u2193", v,
            fmt_ratio(statistics.median(ratios), min(ratios), max(ratios))))
    if not lines:
        return []
    return ["", "**A/B against the baseline build** (each variant / its twin *-base*, the same index "
            "run by the baseline commit's btlayout.so; per round, median [min-max]):", "",
            "| workload | metric | variant | ratio to its -base |", "|---|---|---|---|"] + lines


def write_report(path, summary, meta, chart_note, nrounds, rows, colls=None):
    md = ["# btlayout benchmark", ""]
    if "mode" in meta:
        md += ["> **%s**" % meta["mode"], ""]
    md += ["%s; `%s`" % (meta.get("date", "?"), meta.get("command", "?")), ""]
    md += headline(summary, meta)
    md += headline_text(summary, colls)
    md += baseline_ab(rows)
    md += ["", "## Results", "",
           "Median, min and max over %d measured rounds (warm-up round discarded); *load* rows are "
           "measured once, while loading. "
           "*ratio* = variant / btree computed within each round, then median [min-max] over the rounds. "
           "\u2191 higher is better, \u2193 lower is better." % nrounds, ""]
    has2 = any(s["ratio2_median"] is not None for s in summary)
    if has2 and colls:
        pairs = OrderedDict()
        for s in summary:
            if s["ratio2_ref"] and s["ratio2_ref"] not in pairs.values():
                c = colls.get(s["ratio2_ref"], "default")
                pairs[c] = s["ratio2_ref"]
        md += ["probe-text-*: btree is core btree under COLLATE \"C\"; the second ratio is each variant's to the core "
               "btree of its own collation (%s); their build, size and layout rows are measured once, at load." %
               ", ".join("%s: %s" % ('"%s"' % c if c != "default" else "the database default", r)
                         for c, r in pairs.items()), ""]
    elif has2:
        md += ["probe-text-*: btree is core btree under COLLATE \"C\", %s core btree in the database default "
               "collation; their build, size and layout rows are measured once, at load." % BASELINE2, ""]
    md += ["| workload | metric | variant | median | min | max | ratio to btree |%s" % (
               (" ratio to the btree of its collation |" if colls else " ratio to %s |" % BASELINE2) if has2 else ""),
           "|---|---|---|---:|---:|---:|---|%s" % ("---|" if has2 else "")]
    last = None
    for s in summary:
        wm = (s["workload"], s["metric"])
        w, m = ("", "") if wm == last else (s["workload"], "%s %s" % (s["label"], "\u2191" if s["higher_is_better"] else "\u2193"))
        last = wm
        ratio = "1" if s["variant"] == BASELINE else fmt_ratio(s["ratio_median"], s["ratio_min"], s["ratio_max"])
        row = "| %s | %s | %s | %s | %s | %s | %s |" % (
            w, m, s["variant"], fmt(s["median"]), fmt(s["min"]), fmt(s["max"]), ratio)
        if has2:
            row += " %s |" % ("1" if s["variant"] == s["ratio2_ref"] else
                              fmt_ratio(s["ratio2_median"], s["ratio2_min"], s["ratio2_max"]))
        md.append(row)
    md += ["", "## Setup", "", "| | |", "|---|---|"]
    for k, v in meta.items():
        if k in ("mode",):
            continue
        md.append("| %s | %s |" % (k, v.replace("|", "\\|")))
    md += [""]
    if chart_note:
        md += ["(%s)" % chart_note, ""]
    else:
        md += ["![ratio to btree](ratios.png)", ""]
    md += ["Files: raw.csv (every measurement, round 0 = warm-up), summary.csv, ratios.png, "
           "meta.tsv, bench.log (progress and pgbench output), server.log, scripts/ (the pgbench scripts run).", ""]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(md))


# --- the regimes chart (--regimes-chart) ------------------------------------

# The regimes, in the order of the README's table: (workload, metric, row
# label, and optionally what else a row must have).  A workload ending in
# * matches any suffix ({n}: the number in it); "+preload" is
# select-connect in a run with btlayout preloaded.  "scale": the regime
# is a run of that --scale only (100, bench.sh's default, where a run
# names none), so that the 3M-key rows of issue 47 do not share a line
# with the 10M-key regimes; "variant": the variant charted (else the
# first of REGIME_VARIANTS the run has); "ratio2": the ratio to the core
# btree of the variant's own collation, not to btree under "C".
REGIMES = [
    ("probe-nl", "lookups_per_s", "one index of 10M keys, 1M probes through a nested loop", {"scale": 100}),
    ("probe-part*", "lookups_per_s", "the same keys in a table of {n} partitions, each probe in any partition",
     {"scale": 100}),
    ("probe-tables", "lookups_per_s", "the same keys in separate tables probed by one session", {"scale": 100}),
    ("probe-big", "lookups_per_s", "an index twice shared_buffers, read through the OS cache"),
    ("probe-100m", "lookups_per_s", "100M keys"),
    ("select-connect", "conn_rate", "pgbench -S's statement with a new connection per transaction"),
    ("select-connect+preload", "conn_rate", "the same, shared_preload_libraries = 'btlayout'"),
    ("write-mix", "rate_1c", "writes: an insert of a random key and an update of a key"),
    ("probe-uuid", "lookups_per_s", "10M uuid keys", {"scale": 100}),
    ("probe-composite", "lookups_per_s", "10M (tenant int4, id int8) keys, probed on both columns", {"scale": 100}),
    ("probe-nl", "lookups_per_s", "normalized keys, 3M keys, 500k probes: int4", {"scale": 30}),
    ("probe-composite", "lookups_per_s", "the same, (tenant int4, id int8), probed on both columns", {"scale": 30}),
    ("probe-uuid", "lookups_per_s", "the same, uuid", {"scale": 30}),
    ("probe-text-code8", "lookups_per_s", "the same, codes of 8 bytes under \"C\" (the default class)",
     {"scale": 30, "variant": "btlayout-c-blocked"}),
    ("probe-text-email", "lookups_per_s", "the same, e-mails in ICU \"en-x-icu\", against btree in it",
     {"scale": 30, "variant": "btlayout-icu-blocked", "ratio2": True}),
    ("probe-text-email", "lookups_per_s", "the same, e-mails in libc \"en_US.utf8\", against btree in it",
     {"scale": 30, "variant": "btlayout-libc-blocked", "ratio2": True}),
    ("probe-text-code", "lookups_per_s", "text keys, codes (text_bin_ops against btree under \"C\")", {"scale": 100}),
    ("probe-text-code8", "lookups_per_s", "text keys, codes of 8 characters (text_bin_ops against btree under \"C\")",
     {"scale": 100}),
    ("probe-text-md5", "lookups_per_s", "text keys, md5 (text_bin_ops against btree under \"C\")", {"scale": 100}),
    ("probe-text-url", "lookups_per_s", "text keys, URLs (text_bin_ops against btree under \"C\")", {"scale": 100}),
    ("probe-text-email", "lookups_per_s", "text keys, e-mails (text_bin_ops against btree under \"C\")",
     {"scale": 100}),
    ("probe-batch", "lookups_per_s", "batches of 100 keys a statement (index scans, heap fetches)"),
    ("probe-inlist-100", "lookups_per_s", "IN lists of 100 random keys a statement, index-only"),
    ("probe-inlist-heap-100", "lookups_per_s", "IN lists of 100 random keys a statement, heap fetches"),
    ("probe-skip", "lookups_per_s", "skip scans: the second column of (a, b), 30 values of a"),
    ("select-mix", "rate_2c", "pgbench -S's statement, long-lived connections, 2 clients"),
    ("select-mix", "rate_1c", "pgbench -S's statement, long-lived connections, 1 client"),
    ("range-mix", "rate_2c", "range scans of 101 keys, 2 clients"),
    ("range-mix", "rate_1c", "range scans of 101 keys, 1 client"),
]
# The variant charted where a regime names none: the first of these a
# source has (the default layout)
REGIME_VARIANTS = ["btlayout-blocked", "btlayout-bin-blocked", "btlayout"]
DEFAULT_SCALE = 100


def regimes_of(workload, metric, preload, scale):
    """-> [(rank, key, row label, options)] of the regimes a summary row
    of a run of that scale belongs to."""
    w = workload + ("+preload" if preload and workload == "select-connect" else "")
    out = []
    for i, (pat, m, label, *rest) in enumerate(REGIMES):
        opts = rest[0] if rest else {}
        if m != metric or opts.get("scale", scale) != scale:
            continue
        if pat.endswith("*") and w.startswith(pat[:-1]):
            label = label.format(n=w[len(pat) - 1:])
        elif w != pat:
            continue
        out.append((i, "%s %s %d" % (w, metric, i), label, opts))
    return out


def run_label(meta):
    """-> "15.20, huge pages" from a run's meta.tsv, or None."""
    m = re.search(r"PostgreSQL (\d+(?:\.\d+)?)", meta.get("postgresql", ""))
    if not m:
        return None
    label = m.group(1)
    settings = meta.get("settings", "")
    if "huge_pages=" in settings:
        label += ", no huge pages" if "huge_pages=off" in settings else ", huge pages"
    return label


def read_regimes(source, variant):
    """-> the regime rows of SOURCE (a results directory or a summary CSV,
    optionally LABEL=SOURCE): dicts of series, rank, key, label, median,
    lo, hi."""
    label, path = None, source
    if not os.path.exists(source) and "=" in source:
        label, path = source.split("=", 1)
    if os.path.isdir(path):
        csv_path, meta = os.path.join(path, "summary.csv"), read_meta(os.path.join(path, "meta.tsv"))
        default = os.path.basename(os.path.normpath(path))
    elif os.path.basename(path) == "summary.csv":
        csv_path, meta = path, read_meta(os.path.join(os.path.dirname(path), "meta.tsv"))
        default = os.path.basename(os.path.dirname(os.path.abspath(path)))
    else:
        csv_path, meta = path, {}
        default = os.path.splitext(os.path.basename(path))[0]
    if not os.path.exists(csv_path):
        raise SystemExit("report.py: no %s" % csv_path)
    label = label or run_label(meta) or default
    preloaded = "preload" in meta

    def num(x):
        return float(x) if x not in (None, "") else None

    m = re.match(r"\s*(\d+)", meta.get("scale", ""))
    run_scale = int(m.group(1)) if m else DEFAULT_SCALE

    groups = OrderedDict()  # (series, workload, metric, preload, scale) -> {variant: [rows]}
    with open(csv_path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            series = row.get("run") or label
            pre = (row.get("preload") or "").strip().lower() in ("true", "t", "1", "yes") if row.get("preload") \
                else preloaded
            scale = int(row["scale"]) if row.get("scale") else run_scale
            groups.setdefault((series, row["workload"], row["metric"], pre, scale), OrderedDict()) \
                .setdefault(row["variant"], []).append(row)
    out = []
    for (series, w, m, pre, scale), by_variant in groups.items():
        for rank, key, reg_label, opts in regimes_of(w, m, pre, scale):
            wanted = [opts["variant"]] if "variant" in opts else [variant] if variant else REGIME_VARIANTS
            chosen = next((v for v in wanted if v in by_variant), None)
            if chosen is None:
                continue
            ratio = "ratio2_" if opts.get("ratio2") else "ratio_"
            for row in by_variant[chosen]:
                med, lo, hi = num(row.get(ratio + "median")), num(row.get(ratio + "min")), num(row.get(ratio + "max"))
                if med is None and (lo is None or hi is None):
                    continue
                out.append({"series": series, "rank": rank, "key": key, "label": reg_label, "variant": chosen,
                            "median": med, "lo": lo if lo is not None else med,
                            "hi": hi if hi is not None else med})
    return out


def draw_regimes_chart(path, entries):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    series = []
    for e in entries:
        if e["series"] not in series:
            series.append(e["series"])

    # By server version where the label starts with one, without huge
    # pages first; else in the order given
    def series_order(s):
        m = re.match(r"(\d+(?:\.\d+)*)", s)
        version = tuple(int(x) for x in m.group(1).split(".")) if m else (float("inf"),)
        return (version, 0 if "no huge pages" in s else 1)

    series.sort(key=series_order)
    regimes = sorted({(e["rank"], e["key"], e["label"]) for e in entries})

    # Colour by the label without its huge-pages part (the server version),
    # filled with huge pages, hollow without
    def colour_key(s):
        return re.sub(r",?\s*(no )?huge pages", "", s).strip()

    keys = []
    for s in series:
        if colour_key(s) not in keys:
            keys.append(colour_key(s))
    cmap = plt.get_cmap("tab10")
    colour = {s: cmap(keys.index(colour_key(s)) % 10) for s in series}
    hollow = {s: "no huge pages" in s for s in series}

    # One line per point, the regimes' rows top down, a gap between them
    rows, y, ticks, bands = [], 0.0, [], []
    for rank, key, label in regimes:
        mine = sorted((e for e in entries if e["key"] == key), key=lambda e: series.index(e["series"]))
        top = y
        for e in mine:
            rows.append((y, e))
            y -= 1.0
        ticks.append(((top + y + 1.0) / 2, label))
        bands.append((top + 0.5, y + 0.5))
        y -= 0.7
    height = -y
    fig, ax = plt.subplots(figsize=(10.5, 1.6 + 0.2 * height))
    for i, (hi_y, lo_y) in enumerate(bands):
        if i % 2 == 0:
            ax.axhspan(lo_y, hi_y, color="0.94", zorder=0)
    xmax = max(e["hi"] for _, e in rows)
    xmin = min([0.6] + [e["lo"] for _, e in rows])
    for yy, e in rows:
        c = colour[e["series"]]
        ax.plot([e["lo"], e["hi"]], [yy, yy], color=c, linewidth=1.6, solid_capstyle="butt", zorder=2)
        ax.plot([e["lo"], e["lo"]], [yy - 0.28, yy + 0.28], color=c, linewidth=1.2, zorder=2)
        ax.plot([e["hi"], e["hi"]], [yy - 0.28, yy + 0.28], color=c, linewidth=1.2, zorder=2)
        if e["median"] is not None:
            ax.plot([e["median"]], [yy], marker="o", markersize=6, color=c, zorder=3,
                    markerfacecolor="white" if hollow[e["series"]] else c, markeredgewidth=1.5)
            text = "%.2f" % e["median"]
        else:
            text = "%.2f-%.2f" % (e["lo"], e["hi"])
        ax.text(e["hi"] + 0.03, yy, text, va="center", ha="left", fontsize=7.5, color="0.2")
    ax.axvline(1.0, color="black", linewidth=1.0, zorder=1)
    ax.text(1.0, 0.9, " 1.0 = core btree", ha="left", va="bottom", fontsize=8)
    ax.set_yticks([t for t, _ in ticks])
    ax.set_yticklabels([textwrap.fill(label, 46) for _, label in ticks], fontsize=8)
    ax.set_ylim(y + 0.3, 1.5)
    ax.set_xlim(xmin - 0.05, xmax + 0.35)
    ax.tick_params(axis="x", labelsize=8)
    ax.grid(axis="x", alpha=0.35, zorder=0)
    ax.set_xlabel("btlayout's rate / core btree's, same run (lookups, connections or statements per second):"
                  " above 1.0, btlayout is faster", fontsize=8.5)
    layouts = sorted({e["variant"].split("-")[-1] if "-" in e["variant"] else "the default" for e in entries})
    ax.set_title("btlayout against core btree, by regime (layout: %s)\n"
                 "point = median of the per-round ratios, bar = lowest to highest round"
                 % ", ".join(layouts), fontsize=10)
    handles = [Line2D([], [], color=colour[s], marker="o", markersize=6, linewidth=1.6,
                      markerfacecolor="white" if hollow[s] else colour[s], markeredgewidth=1.5, label=s)
               for s in series]
    versions = all(re.match(r"\d", s) for s in series)
    ax.legend(handles=handles, title="PostgreSQL" if versions else "run", fontsize=8, title_fontsize=8,
              loc="lower right", framealpha=0.95)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def regimes_main(args):
    ap = argparse.ArgumentParser(prog="report.py --regimes-chart",
                                 description="Chart btlayout's ratio to core btree in each regime of the README's "
                                             "table, from summary CSVs (see report.py's docstring).")
    ap.add_argument("out", metavar="OUT.png")
    ap.add_argument("sources", metavar="SOURCE", nargs="+",
                    help="a results directory or a summary CSV, optionally LABEL=SOURCE")
    ap.add_argument("--variant", help="the variant to chart (default: the first of %s)" % ", ".join(REGIME_VARIANTS))
    a = ap.parse_args(args)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("report.py: matplotlib is not installed (apt-get install python3-matplotlib)", file=sys.stderr)
        return 1
    entries = []
    for src in a.sources:
        got = read_regimes(src, a.variant)
        if not got:
            print("report.py: no regime rows in %s" % src, file=sys.stderr)
        entries += got
    if not entries:
        print("report.py: nothing to chart", file=sys.stderr)
        return 1
    draw_regimes_chart(a.out, entries)
    print("report.py: wrote %s: %d regimes, %d labels, %d points" % (
        a.out, len({e["key"] for e in entries}), len({e["series"] for e in entries}), len(entries)))
    return 0


def main(argv):
    if len(argv) >= 2 and argv[1] == "--regimes-chart":
        return regimes_main(argv[2:])
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 2 if len(argv) != 2 else 0
    d = argv[1]
    raw = os.path.join(d, "raw.csv")
    if not os.path.exists(raw):
        print("report.py: no raw.csv in %s" % d, file=sys.stderr)
        return 1
    rows = read_raw(raw)
    meta = read_meta(os.path.join(d, "meta.tsv"))
    refs, colls = text_references(meta)
    summary = summarise(rows, refs)
    if not summary:
        print("report.py: no measured rounds in %s" % raw, file=sys.stderr)
        return 1
    nrounds = len({r for r, *_ in rows if r > 0})
    write_summary_csv(os.path.join(d, "summary.csv"), summary)
    chart_note = draw_chart(os.path.join(d, "ratios.png"), summary)
    write_report(os.path.join(d, "report.md"), summary, meta, chart_note, nrounds, rows, colls)
    print("report.py: wrote summary.csv, report.md%s in %s" % ("" if chart_note else ", ratios.png", d))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
