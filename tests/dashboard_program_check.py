#!/usr/bin/env python3
"""The dashboard's Programs section in headless Chromium, over the DevTools
pipe of dashboard_browser_check.py (standard library only).

Loads the page, then for the first program: the plan dump's text, the
capacity table's rows, the static stick-figure strip (figures, bone lines,
labels, and the lines' extent: the figures have a height), and the shared
stick-figure player as dashboard_player_check.py reads it (ink on every
canvas, playing advances the clock, scrubbing moves it; a screenshot).

usage: dashboard_program_check.py CHROMIUM OUT_DIR PAGE.html
prints one JSON object.
"""

import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dashboard_browser_check import Browser, Page  # noqa: E402
from dashboard_player_check import one  # noqa: E402

SECTION = """(() => { const a = document.querySelector('#programs article.program');
  if (!a) return null;
  const figs = Array.from(a.querySelectorAll('svg.strip g.strip-fig')).map(g => {
    const ls = Array.from(g.querySelectorAll('line')); let y0 = 1e9, y1 = -1e9;
    ls.forEach(l => { [l.y1, l.y2].forEach(y => { const v = y.baseVal.value; y0 = Math.min(y0, v); y1 = Math.max(y1, v); }); });
    return {lines: ls.length, height: y1 - y0}; });
  return {id: a.id, name: a.getAttribute('data-program'),
          nav: !!document.querySelector('nav a[href="#programs"]'),
          plan: a.querySelector('pre.plan').textContent,
          capacities: Array.from(a.querySelectorAll('table.capacities tbody tr')).map(r => r.textContent),
          verified: a.querySelector('p.verified').textContent,
          strip: figs,
          labels: Array.from(a.querySelectorAll('svg.strip text')).map(t => t.textContent)}; })()"""


def main():
    chromium, out_dir, html = sys.argv[1:4]
    os.makedirs(out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory() as profile:
        b = Browser(chromium, profile)
        try:
            page = Page(b)
            page.goto("file://" + os.path.abspath(html))
            time.sleep(0.2)
            section = page.js(SECTION)
            player = None
            if section:
                player = one(page, html, section["id"], os.path.join(out_dir, "program-player.png"))
            page.drain()
        finally:
            b.close()
    print(json.dumps({"section": section, "player": player,
                      "console_errors": page.errors, "requests": page.requests}))


if __name__ == "__main__":
    main()
