#!/usr/bin/env python3
"""Draws a bubble trace (Chrome trace JSON, Trace::chrome_json()) as an SVG: one lane per thread,
its slices ("X" events) as boxes stacked by nesting, notes as diamonds, a virtual-time axis.
  trace_to_svg.py TRACE.json OUT.svg"""
import json
import sys
from xml.sax.saxutils import escape

events = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["tid"]: e["args"]["name"] for e in events if e.get("ph") == "M"}
# Outer slices first: earlier, then longer, then (slices of equal extent) written later, since an
# enclosing slice ends, and so is written, after the slices inside it.
slices = [e for e in events if e.get("ph") == "X"]
order = {id(e): i for i, e in enumerate(slices)}
slices.sort(key=lambda e: (e["tid"], e["ts"], -e["dur"], -order[id(e)]))
kinds = ("spawn", "op", "wake", "timeout", "run", "exit", "timer", "advance", "wait", "failure")
notes = [e for e in events if e.get("ph") == "i" and e["name"].split(" ")[0] not in kinds]
tids = sorted({e["tid"] for e in slices})
end = max(e["ts"] + e["dur"] for e in slices) or 1
ROW, LEFT, WIDTH = 18, 130, 760
x = lambda us: LEFT + WIDTH * us / end
depth, lanes = {}, {}
for tid in tids:  # Nesting depth: a stack of the slices still open at each start.
    stack = []
    for e in (s for s in slices if s["tid"] == tid):
        while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"] and stack[-1]["dur"] > 0:
            stack.pop()
        depth[id(e)] = len(stack)
        stack.append(e)
    lanes[tid] = max((depth[id(e)] for e in slices if e["tid"] == tid), default=0) + 1
colour = lambda n: ("#e8a33d" if n.endswith(" wait") else "#d9534f" if n.endswith(" held")
                    else "#5b9bd5" if n[:1].islower() else "#9e9e9e")
out, y, top = [], 30, {}
for tid in tids:
    top[tid] = y
    out.append(f'<text x="4" y="{y + 13}">{escape(names.get(tid, str(tid)))}</text>')
    y += lanes[tid] * ROW + 16
for e in slices:
    yy = top[e["tid"]] + depth[id(e)] * ROW
    w = max(x(e["ts"] + e["dur"]) - x(e["ts"]), 1)
    out.append(f'<rect x="{x(e["ts"]):.1f}" y="{yy}" width="{w:.1f}" height="{ROW - 2}" '
               f'fill="{colour(e["name"])}"><title>{escape(e["name"])}</title></rect>')
    if w > 6 * len(e["name"]):
        out.append(f'<text x="{x(e["ts"]) + 3:.1f}" y="{yy + 12}">{escape(e["name"])}</text>')
for e in notes:
    yy = top.get(e["tid"], 30) + lanes.get(e["tid"], 1) * ROW + 4
    out.append(f'<path d="M{x(e["ts"]):.1f} {yy - 5} l5 5 l-5 5 l-5 -5 z" fill="#000"/>'
               f'<text x="{x(e["ts"]) + 7:.1f}" y="{yy + 4}">{escape(e["name"])}</text>')
for i in range(11):  # Axis: virtual milliseconds.
    t = end * i / 10
    out.append(f'<line x1="{x(t):.1f}" y1="{y}" x2="{x(t):.1f}" y2="{y + 5}" stroke="#000"/>'
               f'<text x="{x(t) - 10:.1f}" y="{y + 17}">{t / 1000:g} ms</text>')
svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{LEFT + WIDTH + 40}" height="{y + 30}" '
       f'font-family="sans-serif" font-size="11"><rect width="100%" height="100%" fill="#fff"/>'
       + "".join(out) + "</svg>\n")
open(sys.argv[2], "w").write(svg)
