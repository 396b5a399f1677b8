#!/usr/bin/env python3
"""Draws the scaling study's exposed all-reduce time as an SVG bar chart (the standard
library only, like plot_quality.py): one group per link and wire, a bar for --overlap off
and one for on, each labelled with its samples/s against shared memory with overlap off.

    python3 scripts/plot_scaling.py runs/scaling/results.txt --batch 64 --out docs/scaling_overlap.svg

RESULTS is scripts/scaling_study.sh's results.txt (medians are taken over its rounds).
Exit 2 when it holds no run of that batch size.
"""
import argparse
import sys

from scaling_results import medians

WIDTH, HEIGHT, LEFT, BOTTOM, TOP = 720, 360, 60, 60, 40
COLORS = {"off": "#b0b0b0", "on": "#3a78c2"}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    m = medians(a.results, a.batch)
    if not m:
        sys.exit("plot_scaling: no run of batch %d in %s" % (a.batch, a.results))
    groups = sorted({(link, wire) for link, wire, _ in m}, key=lambda g: (g[0] != "shm", g[0], g[1]))
    top = max(v[3] for v in m.values()) * 1.25
    plot_w, plot_h = WIDTH - LEFT - 20, HEIGHT - BOTTOM - TOP
    group_w = plot_w / len(groups)
    svg = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">'
           % (WIDTH, HEIGHT), '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="20" font-size="14">DCGAN, batch %d, 2 ranks: exposed all-reduce ms per step '
           '(label: samples/s vs shared memory, overlap off)</text>' % (LEFT, a.batch)]
    for tick in range(0, int(top) + 1, max(10, int(top / 5) // 10 * 10)):
        y = TOP + plot_h - tick / top * plot_h
        svg.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#e0e0e0"/>' % (LEFT, LEFT + plot_w, y, y))
        svg.append('<text x="%d" y="%.1f" text-anchor="end">%d</text>' % (LEFT - 6, y + 4, tick))
    for i, (link, wire) in enumerate(groups):
        x0 = LEFT + i * group_w
        base = m.get(("shm", wire, "off"))
        for j, overlap in enumerate(("off", "on")):
            v = m.get((link, wire, overlap))
            if v is None:
                continue
            h = v[3] / top * plot_h
            x = x0 + group_w * (0.15 + 0.35 * j)
            y = TOP + plot_h - h
            svg.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>'
                       % (x, y, group_w * 0.3, h, COLORS[overlap]))
            label = "%.2f" % (v[1] / base[1]) if base else ""
            svg.append('<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>' % (x + group_w * 0.15, y - 4, label))
        name = "shared memory" if link == "shm" else link.replace("gbit", " Gbit/s")
        svg.append('<text x="%.1f" y="%d" text-anchor="middle">%s, %s wire</text>'
                   % (x0 + group_w / 2, TOP + plot_h + 18, name, wire))
    for j, overlap in enumerate(("off", "on")):
        svg.append('<rect x="%d" y="%d" width="12" height="12" fill="%s"/>' % (LEFT + 180 * j, HEIGHT - 22,
                                                                            COLORS[overlap]))
        svg.append('<text x="%d" y="%d">--overlap %s</text>' % (LEFT + 180 * j + 18, HEIGHT - 12, overlap))
    svg.append("</svg>")
    with open(a.out, "w") as f:
        f.write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()
