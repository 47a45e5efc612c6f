#!/usr/bin/env python3
"""The clip detail's stick-figure player in headless Chromium, over the
DevTools pipe of dashboard_browser_check.py (standard library only).

For each page: load the index, open one clip (its detail fragment loads;
CLIP_ID "-" opens the first clip of the table), then read the player: the
figures it draws (2 for a retargeted clip: source and result), its draw
count, the non-background pixels of every canvas (side, top and timeline
views), whether playing advances the clock and scrubbing moves it; a
screenshot of the player.

usage: dashboard_player_check.py CHROMIUM OUT_DIR (PAGE.html CLIP_ID SHOT.png)...
prints a JSON list, one object per page.
"""

import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dashboard_browser_check import Browser, Page  # noqa: E402

FIRST_CLIP = """(() => { const d = JSON.parse(document.getElementById('ludus-data').textContent);
    return d.rows[0][d.cols.indexOf('id')]; })()"""

# Canvas pixels that differ from the background the player clears to
# (#fbfbfc) and from transparent: what was drawn.
INK = """(() => { const fig = document.querySelector(%s + ' figure[data-player]');
  if (!fig) return null;
  const canvases = Array.from(fig.querySelectorAll('canvas')).map(c => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let ink = 0;
    for (let i = 0; i < d.length; i += 4)
      if (d[i + 3] > 0 && !(d[i] === 0xfb && d[i + 1] === 0xfb && d[i + 2] === 0xfc)) ink++;
    return {cls: c.className, w: c.width, h: c.height, ink: ink};
  });
  const p = (window.ludusPlayers || []).find(p => fig === p.el);
  return {drawn: parseInt(fig.getAttribute('data-drawn') || '0', 10), error: fig.getAttribute('data-error'),
          figures: p ? p.figures : 0, t: p ? p.state.t : null, canvases: canvases,
          caption: fig.querySelector('figcaption').textContent}; })()"""


def one(page, html, clip_id, shot):
    page.goto("file://" + os.path.abspath(html))
    time.sleep(0.2)
    if clip_id == "-":
        clip_id = page.js(FIRST_CLIP)
    page.js(f"location.hash = {json.dumps(clip_id)}")
    sel = json.dumps("#" + clip_id)
    deadline = time.time() + 20
    while time.time() < deadline and not page.js(f"!!document.querySelector({sel} + ' figure[data-player][data-drawn]')"):
        time.sleep(0.05)
    res = {"clip": clip_id, "before": page.js(INK % sel)}
    if res["before"] is None:
        return res
    page.click(f"#{clip_id} .pl-play")
    time.sleep(0.6)
    res["playing"] = page.js(INK % sel)
    page.click(f"#{clip_id} .pl-play")
    page.js(f"""(() => {{ const s = document.querySelector({sel} + ' .pl-scrub');
        s.value = '500'; s.dispatchEvent(new Event('input')); }})()""")
    res["scrubbed"] = page.js(INK % sel)
    page.js("document.querySelector('header').style.position = 'static'")
    rect = page.js(f"""(() => {{ const e = document.querySelector({sel} + ' figure[data-player]');
        e.scrollIntoView(); const r = e.getBoundingClientRect();
        return {{x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height, scale: 1}}; }})()""")
    res["screenshot"] = page.shot(shot, rect)
    return res


def main():
    chromium, out_dir = sys.argv[1:3]
    rest = sys.argv[3:]
    os.makedirs(out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory() as profile:
        b = Browser(chromium, profile)
        try:
            page = Page(b)
            res = [one(page, rest[i], rest[i + 1], os.path.join(out_dir, rest[i + 2]))
                   for i in range(0, len(rest), 3)]
            page.drain()
        finally:
            b.close()
    print(json.dumps({"pages": res, "console_errors": page.errors, "requests": page.requests}))


if __name__ == "__main__":
    main()
