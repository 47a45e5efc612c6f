#!/usr/bin/env python3
"""Layout of the dashboard in headless Chromium at several widths, over
the DevTools pipe of dashboard_browser_check.py (standard library only).

At each width: load the index, open one clip (its detail fragment loads),
then list every element wider than the viewport or reaching past its
right edge (content inside a horizontally scrolling box is the box's
business, not the page's), and every table row taller than its tallest
cell's content needs; screenshots of the top and of the clip.

usage: dashboard_layout_check.py CHROMIUM PAGE.html OUT_DIR CLIP_ID [WIDTH...]
       dashboard_layout_check.py --load CHROMIUM PAGE.html
         (prints the page's load time in ms, at 1400 px: navigation start
          to the end of the load event, the clip table drawn)
"""

import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dashboard_browser_check import Browser, Page  # noqa: E402

WIDTHS = [390, 1400, 2560]
SLACK_PX = 4

OVERFLOW = """(() => {
  const vw = document.documentElement.clientWidth, out = [];
  const scrolls = el => { for (let a = el.parentElement; a; a = a.parentElement) {
      const o = getComputedStyle(a).overflowX; if (o === 'auto' || o === 'scroll' || o === 'hidden') return true; }
    return false; };
  for (const el of document.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    if ((r.width > vw + 1 || r.right > vw + 1) && !scrolls(el))
      out.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
               (el.className && el.className.baseVal === undefined ? '.' + el.className : '') +
               ' ' + Math.round(r.width) + 'px');
  }
  return {viewport: vw, scroll_width: document.documentElement.scrollWidth, wide: out.slice(0, 20), count: out.length};
})()"""

TALL_ROWS = """(() => {
  const out = []; let rows = 0;
  for (const tr of document.querySelectorAll('table tr')) {
    const h = tr.getBoundingClientRect().height;
    if (h === 0) continue;
    rows++;
    let need = 0;
    for (const td of tr.cells) {
      const cs = getComputedStyle(td), range = document.createRange();
      range.selectNodeContents(td);
      const content = range.getBoundingClientRect().height;
      const pad = parseFloat(cs.paddingTop) + parseFloat(cs.paddingBottom) +
                  parseFloat(cs.borderTopWidth) + parseFloat(cs.borderBottomWidth);
      need = Math.max(need, content + pad);
    }
    if (h > need + %d) out.push((tr.closest('table').id || 'table') + ' row ' + tr.rowIndex +
                               ': ' + Math.round(h) + 'px for ' + Math.round(need) + 'px');
  }
  return {rows: rows, tall: out.slice(0, 20), count: out.length};
})()""" % SLACK_PX


def open_clip(page, clip_id):
    page.js(f"location.hash = {json.dumps(clip_id)}")
    deadline = time.time() + 20
    while time.time() < deadline:
        if page.js(f"!!document.getElementById({json.dumps(clip_id)})"):
            return True
        time.sleep(0.05)
    return False


def at_width(page, html, out_dir, clip_id, width):
    page.cmd("Emulation.setDeviceMetricsOverride",
             {"width": width, "height": 1000, "deviceScaleFactor": 1, "mobile": width < 600})
    page.goto("file://" + os.path.abspath(html))
    time.sleep(0.2)
    res = {"width": width, "screenshots": [page.shot(os.path.join(out_dir, f"top-{width}.png"))]}
    res["clip_opened"] = open_clip(page, clip_id)
    page.js("document.querySelectorAll('details').forEach(d => d.open = true)")
    time.sleep(0.2)
    res["overflow"] = page.js(OVERFLOW)
    res["rows"] = page.js(TALL_ROWS)
    if res["clip_opened"]:
        rect = page.js(f"""(() => {{ const e = document.getElementById({json.dumps(clip_id)});
            e.scrollIntoView(); const r = e.getBoundingClientRect();
            return {{x: r.left + scrollX, y: r.top + scrollY, width: Math.min(r.width, {width}),
                     height: Math.min(r.height, 2400), scale: 1}}; }})()""")
        res["screenshots"].append(page.shot(os.path.join(out_dir, f"clip-{width}.png"), rect))
    return res


def load_time(chromium, html):
    with tempfile.TemporaryDirectory() as profile:
        b = Browser(chromium, profile)
        try:
            page = Page(b)
            t0 = time.time()
            page.goto("file://" + os.path.abspath(html))
            wall = (time.time() - t0) * 1000
            nav = page.js("(() => { const n = performance.getEntriesByType('navigation')[0];"
                          " return {load: n.loadEventEnd, dcl: n.domContentLoadedEventEnd}; })()")
            rows = page.js("document.querySelectorAll('#clip-table tbody tr').length")
            page.drain()
            return {"load_ms": nav["load"], "dom_ms": nav["dcl"], "wall_ms": wall,
                    "rows_drawn": rows, "errors": page.errors}
        finally:
            b.close()


def main():
    if sys.argv[1] == "--load":
        print(json.dumps(load_time(sys.argv[2], sys.argv[3])))
        return
    chromium, html, out_dir, clip_id = sys.argv[1:5]
    widths = [int(w) for w in sys.argv[5:]] or WIDTHS
    os.makedirs(out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory() as profile:
        b = Browser(chromium, profile)
        try:
            page = Page(b)
            res = [at_width(page, html, out_dir, clip_id, w) for w in widths]
            page.drain()
        finally:
            b.close()
    print(json.dumps({"widths": res, "console_errors": page.errors, "requests": page.requests}))


if __name__ == "__main__":
    main()
