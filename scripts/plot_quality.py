#!/usr/bin/env python3
"""Draws the quality score of runs per epoch as an SVG line plot (no plotting library:
the standard library only), for comparing runs, e.g. with and without --augment:

    python3 scripts/plot_quality.py runs/plain runs/augment --out docs/emoji_quality.svg
    python3 scripts/plot_quality.py runs/a runs/b --column quality_kid --out kid.svg

Each RUN is a run folder; its epochs.csv's COLUMN (quality_fd by default) is drawn against
the epoch, one line per run (labelled with the folder's name), on a logarithmic y axis
(scores fall by orders of magnitude over a run). Epochs without a score (an empty, -1 or
nan value) are left out. Exit 2 when a run has no epochs.csv or no scored epoch.
"""
import argparse
import csv
import math
import os
import sys

WIDTH, HEIGHT = 720, 400
LEFT, RIGHT, TOP, BOTTOM = 70, 150, 30, 50
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]


def scores(run, column):
    path = os.path.join(run, "epochs.csv")
    try:
        rows = list(csv.DictReader(open(path)))
    except OSError as e:
        sys.exit(f"plot_quality: cannot read {path}: {e}")
    points = []
    for k, row in enumerate(rows, 1):
        try:
            v = float(row.get(column, "nan"))
        except ValueError:
            continue
        if math.isfinite(v) and v > 0:
            points.append((k, v))
    if not points:
        sys.exit(f"plot_quality: {path} has no scored epoch in column {column}")
    return points


def svg(series, column):
    epochs = max(k for _, pts in series for k, _ in pts)
    lo = min(v for _, pts in series for _, v in pts)
    hi = max(v for _, pts in series for _, v in pts)
    lo, hi = 10 ** math.floor(math.log10(lo)), 10 ** math.ceil(math.log10(hi))
    x = lambda k: LEFT + (k - 1) / max(epochs - 1, 1) * (WIDTH - LEFT - RIGHT)
    y = lambda v: TOP + (math.log10(hi) - math.log10(v)) / (math.log10(hi) - math.log10(lo)) * (HEIGHT - TOP - BOTTOM)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif" '
           f'font-size="12"><rect width="100%" height="100%" fill="white"/>']
    decade = lo
    while decade <= hi * 1.0001:
        out.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(decade):.1f}" y2="{y(decade):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y(decade) + 4:.1f}" text-anchor="end">{decade:g}</text>')
        decade *= 10
    step = max(1, round(epochs / 10))
    for k in range(1, epochs + 1, step):
        out.append(f'<text x="{x(k):.1f}" y="{HEIGHT - BOTTOM + 18}" text-anchor="middle">{k}</text>')
    out.append(f'<text x="{(LEFT + WIDTH - RIGHT) / 2}" y="{HEIGHT - 10}" text-anchor="middle">epoch</text>')
    out.append(f'<text x="16" y="{(TOP + HEIGHT - BOTTOM) / 2}" transform="rotate(-90 16 {(TOP + HEIGHT - BOTTOM) / 2})" '
               f'text-anchor="middle">{column} (log scale)</text>')
    out.append(f'<rect x="{LEFT}" y="{TOP}" width="{WIDTH - LEFT - RIGHT}" height="{HEIGHT - TOP - BOTTOM}" '
               f'fill="none" stroke="#444"/>')
    for i, (name, pts) in enumerate(series):
        colour = COLOURS[i % len(COLOURS)]
        path = " ".join(f"{x(k):.1f},{y(v):.1f}" for k, v in pts)
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        ly = TOP + 16 + 20 * i
        out.append(f'<line x1="{WIDTH - RIGHT + 10}" x2="{WIDTH - RIGHT + 30}" y1="{ly}" y2="{ly}" stroke="{colour}" '
                   f'stroke-width="2"/><text x="{WIDTH - RIGHT + 36}" y="{ly + 4}">{name}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="run folders")
    parser.add_argument("--column", default="quality_fd", help="the epochs.csv column to draw (default quality_fd)")
    parser.add_argument("--out", required=True, help="the SVG file to write")
    args = parser.parse_args()
    series = [(os.path.basename(os.path.normpath(r)), scores(r, args.column)) for r in args.runs]
    with open(args.out, "w") as f:
        f.write(svg(series, args.column))
    print(f"plot_quality: {args.out} ({len(series)} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
