#!/usr/bin/env python3
"""Drive headless Chromium over the DevTools protocol on a pipe
(--remote-debugging-pipe: NUL-separated JSON on fds 3 and 4), with only
Python's standard library: no Playwright, no browser download, no socket.

Opens the dashboard page, then prints one JSON object: console errors,
every network request URL, the clip table's first page, what sorting by a
real mouse click on a header did (over every clip, not just the page),
filtering, then opens one clip (its detail fragment loads) and counts plot
SVGs (and whether each heat-map image decodes), and the screenshots
written.

usage: browser_check.py CHROMIUM PAGE.html OUT_DIR CLIP_ID
"""

import base64
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time

FLAGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
    "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--hide-scrollbars",
    "--remote-debugging-pipe",
]
TIMEOUT_S = 60


class Browser:
    def __init__(self, chromium, profile):
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()

        def wire():
            a, b = os.dup(to_child_r), os.dup(from_child_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [chromium, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            preexec_fn=wire, close_fds=False,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self.next_id = 0
        self.replies = {}
        self.events = queue.Queue()
        self.cond = threading.Condition()
        threading.Thread(target=self.reader, daemon=True).start()

    def reader(self):
        buf = b""
        while True:
            chunk = os.read(self.from_child, 1 << 16)
            if not chunk:
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                msg = json.loads(raw)
                if "id" in msg:
                    with self.cond:
                        self.replies[msg["id"]] = msg
                        self.cond.notify_all()
                else:
                    self.events.put(msg)

    def send(self, method, params=None, session=None):
        self.next_id += 1
        mid = self.next_id
        msg = {"id": mid, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.time() + TIMEOUT_S
        with self.cond:
            while mid not in self.replies:
                left = deadline - time.time()
                if left <= 0:
                    raise TimeoutError(method)
                self.cond.wait(left)
            reply = self.replies.pop(mid)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def close(self):
        try:
            self.send("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class Page:
    def __init__(self, browser):
        self.b = browser
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.s = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.errors, self.requests, self.loaded = [], [], False
        for domain in ["Runtime", "Log", "Network", "Page"]:
            self.cmd(f"{domain}.enable")
        self.cmd("Emulation.setDeviceMetricsOverride",
                 {"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": False})

    def cmd(self, method, params=None):
        return self.b.send(method, params, self.s)

    def drain(self):
        while True:
            try:
                ev = self.b.events.get_nowait()
            except queue.Empty:
                return
            m, p = ev.get("method"), ev.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                self.errors.append("console: " + " ".join(str(a.get("value", a.get("description"))) for a in p.get("args", [])))
            elif m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                self.errors.append("exception: " + str(d.get("exception", {}).get("description", d.get("text"))))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                self.errors.append("log: " + p["entry"].get("text", ""))
            elif m == "Network.requestWillBeSent":
                self.requests.append(p.get("request", {}).get("url", ""))
            elif m == "Page.loadEventFired":
                self.loaded = True

    def goto(self, url):
        self.loaded = False
        self.cmd("Page.navigate", {"url": url})
        deadline = time.time() + TIMEOUT_S
        while not self.loaded and time.time() < deadline:
            time.sleep(0.05)
            self.drain()
        if not self.loaded:
            raise TimeoutError("page load")

    def js(self, expr, await_promise=False):
        r = self.cmd("Runtime.evaluate", {"expression": expr, "returnByValue": True, "awaitPromise": await_promise})
        if "exceptionDetails" in r:
            raise RuntimeError(f"evaluate {expr[:60]}: {r['exceptionDetails']}")
        return r.get("result", {}).get("value")

    def click(self, selector):
        box = self.js(f"""(() => {{ const e = document.querySelector({json.dumps(selector)});
            e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect();
            return [r.left + r.width / 2, r.top + r.height / 2]; }})()""")
        for kind in ("mousePressed", "mouseReleased"):
            self.cmd("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1], "button": "left", "clickCount": 1})

    def shot(self, path, clip=None):
        params = {"format": "png"}
        if clip:
            params.update({"clip": clip, "captureBeyondViewport": True})
        data = self.cmd("Page.captureScreenshot", params)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        return path


SORT_COLUMN = "#clip-table thead th:nth-child(6)"  # compressed bytes
COLUMN_VALUES = """Array.from(document.querySelectorAll('#clip-table tbody tr'))
    .map(r => parseFloat(r.cells[5].getAttribute('data-v')))"""
ALL_VALUES = """(() => { const d = JSON.parse(document.getElementById('ludus-data').textContent);
    const k = d.cols.indexOf('compressed_bytes'); return d.rows.map(r => r[k]); })()"""
SHOWN = "parseInt(document.getElementById('clip-count').textContent, 10)"
PLOTS = """(() => { const svgs = Array.from(document.querySelectorAll('svg.plot'));
    return { count: svgs.length,
             empty: svgs.filter(s => s.childElementCount === 0 || s.getBoundingClientRect().width === 0)
                        .map(s => s.getAttribute('aria-label')),
             images: Array.from(document.querySelectorAll('svg.plot image')).map(i => i.getAttribute('href')) }; })()"""
DECODE = """Promise.all(Array.from(document.querySelectorAll('svg.plot image')).map(i => {
    const img = new Image(); img.src = i.getAttribute('href');
    return img.decode().then(() => img.naturalWidth > 0 ? 0 : 1, () => 1); })).then(v => v.reduce((a, b) => a + b, 0))"""


def check(page, html, out_dir, clip_id):
    page.goto("file://" + os.path.abspath(html))
    time.sleep(0.3)
    page.drain()
    res = {"rows": page.js("document.querySelectorAll('#clip-table tbody tr').length"),
           "data_rows": page.js("JSON.parse(document.getElementById('ludus-data').textContent).rows.length"),
           "screenshots": [page.shot(os.path.join(out_dir, "overview.png"))]}
    every = page.js(ALL_VALUES)
    page.click(SORT_COLUMN)
    asc = page.js(COLUMN_VALUES)
    page.click(SORT_COLUMN)
    desc = page.js(COLUMN_VALUES)
    res["sort"] = {"header": page.js(f"document.querySelector('{SORT_COLUMN}').textContent"),
                   "ascending": asc == sorted(every)[:len(asc)],
                   "descending": desc == sorted(every, reverse=True)[:len(desc)],
                   "aria": page.js(f"document.querySelector('{SORT_COLUMN}').getAttribute('aria-sort')")}
    page.js("(() => { const f = document.getElementById('clip-filter'); f.value = 'walk';"
            " f.dispatchEvent(new Event('input')); })()")
    res["filtered_rows"] = page.js(SHOWN)
    res["filter_label"] = page.js("document.getElementById('clip-count').textContent")
    page.js("(() => { const f = document.getElementById('clip-filter'); f.value = '';"
            " f.dispatchEvent(new Event('input')); })()")
    res["shown_rows"] = page.js(SHOWN)
    page.js(f"location.hash = {json.dumps(clip_id)}")
    deadline = time.time() + 20
    while time.time() < deadline and not page.js(f"!!document.getElementById({json.dumps(clip_id)})"):
        time.sleep(0.05)
    plots = page.js(PLOTS)
    res["plots"], res["empty_plots"] = plots["count"], plots["empty"]
    res["images"] = len(plots["images"])
    res["images_failed"] = page.js(DECODE, await_promise=True)
    res["clip_found"] = page.js(f"!!document.getElementById({json.dumps(clip_id)})")
    if res["clip_found"]:
        rect = page.js(f"""(() => {{ const e = document.getElementById({json.dumps(clip_id)});
            const r = e.getBoundingClientRect();
            return {{x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: Math.min(r.height, 2400), scale: 1}}; }})()""")
        res["screenshots"].append(page.shot(os.path.join(out_dir, "clip.png"), rect))
    page.drain()
    res["console_errors"], res["requests"] = page.errors, page.requests
    return res


def main():
    chromium, html, out_dir, clip_id = sys.argv[1:5]
    os.makedirs(out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory() as profile:
        b = Browser(chromium, profile)
        try:
            res = check(Page(b), html, out_dir, clip_id)
        finally:
            b.close()
    print(json.dumps(res))


if __name__ == "__main__":
    main()
