#!/usr/bin/env python3
"""`cupmon report` as a person sees it: the page opened in headless Chromium.

For the torch_mlp fixture and a synthetic 4-rank run (bench/report's make-run), it
writes the page with the cupmon binary, opens it through the DevTools protocol (over
--remote-debugging-pipe: no network port, stdlib only), and fails on any console error,
uncaught exception, failed or non-local resource load; then checks what is drawn: the
charts (one SVG each, a line per series with points), the top-kernel table against
`cupmon stats`' numbers, the rank table, the slowest rank, the window link, and that
dragging across a chart zooms every chart. Screenshots go to --out (and the run's to
--screenshot, the README's docs/report.png, when given).
"""

import argparse
import base64
import fcntl
import json
import struct
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests/fixtures/h200-cupti13.0/torch_mlp"
WIDTH = 1400


class Failure(Exception):
    pass


class Browser:
    """One headless Chromium, driven over the DevTools pipe (fds 3 and 4)."""

    def __init__(self, chromium, profile):
        cmd_r, cmd_w = os.pipe()
        res_r, res_w = os.pipe()
        hi_r = fcntl.fcntl(cmd_r, fcntl.F_DUPFD, 10)
        hi_w = fcntl.fcntl(res_w, fcntl.F_DUPFD, 10)

        def fds():
            os.dup2(hi_r, 3)
            os.dup2(hi_w, 4)

        self.proc = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--remote-debugging-pipe", f"--user-data-dir={profile}",
             f"--window-size={WIDTH},1000", "about:blank"],
            preexec_fn=fds, pass_fds=(3, 4),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for fd in (cmd_r, res_w, hi_r, hi_w):
            os.close(fd)
        self.out, self.inp = cmd_w, res_r
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget",
                                 {"targetId": target, "flatten": True})["sessionId"]

    def _read(self, timeout):
        while b"\0" not in self.buf:
            ready, _, _ = select.select([self.inp], [], [], timeout)
            if not ready:
                raise Failure("Chromium did not answer in time")
            chunk = os.read(self.inp, 1 << 20)
            if not chunk:
                raise Failure("Chromium closed the DevTools pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, timeout=60):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if self.session:
            msg["sessionId"] = self.session
        os.write(self.out, json.dumps(msg).encode() + b"\0")
        while True:
            m = self._read(timeout)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise Failure(f"{method}: {m['error']}")
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def wait_for(self, method, timeout=60):
        deadline = time.time() + timeout
        while True:
            for e in self.events:
                if e["method"] == method:
                    return e
            self.events.append(self._read(max(0.1, deadline - time.time())))

    def open(self, path):
        self.events.clear()
        for domain in ("Runtime", "Log", "Network", "Page"):
            self.call(f"{domain}.enable")
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": WIDTH, "height": 1000, "deviceScaleFactor": 1, "mobile": False})
        self.call("Page.navigate", {"url": path.resolve().as_uri()})
        self.wait_for("Page.loadEventFired")
        self.js("new Promise(r => requestAnimationFrame(() => setTimeout(r, 50)))")
        self.check_clean(path)

    def check_clean(self, path):
        problems = []
        for e in self.events:
            m, p = e["method"], e.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                problems.append("console error: " + " ".join(
                    str(a.get("value", a.get("description"))) for a in p.get("args", [])))
            elif m == "Runtime.exceptionThrown":
                problems.append("exception: " + json.dumps(p.get("exceptionDetails"))[:500])
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                problems.append("log error: " + p["entry"].get("text", ""))
            elif m == "Network.loadingFailed":
                problems.append(f"failed load: {p.get('errorText')} ({p.get('type')})")
            elif m == "Network.requestWillBeSent":
                url = p["request"]["url"]
                if not url.startswith(("file:", "data:", "about:")):
                    problems.append(f"non-local request: {url}")
        if problems:
            raise Failure(f"{path.name}: " + "; ".join(problems))

    def check_fits(self, path):
        """The page is no wider than the window (a long note or path wraps, a wide
        table scrolls inside itself), at WIDTH and at a narrow 800 px."""
        for width in (WIDTH, 800):
            self.call("Emulation.setDeviceMetricsOverride",
                      {"width": width, "height": 1000, "deviceScaleFactor": 1, "mobile": False})
            self.js("new Promise(r => requestAnimationFrame(() => setTimeout(r, 50)))")
            wide = self.js(
                "(() => { const w = document.documentElement.clientWidth;"
                " if (document.documentElement.scrollWidth <= w) return null;"
                " const e = Array.from(document.querySelectorAll('body *'))"
                "   .filter(e => e.getBoundingClientRect().right > w + 1)"
                "   .filter(e => !e.closest('table, pre'))[0];"
                " return [document.documentElement.scrollWidth, w,"
                "   e ? e.tagName + ' ' + (e.id || e.className) + ': ' + e.textContent.slice(0, 80) : ''];"
                "})()")
            if wide:
                raise Failure(f"{path.name}: the page is {wide[0]} px wide in a {wide[1]} px "
                              f"window (widest: {wide[2]})")
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": WIDTH, "height": 1000, "deviceScaleFactor": 1, "mobile": False})

    def js(self, expr):
        r = self.call("Runtime.evaluate",
                      {"expression": expr, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            raise Failure(f"evaluating {expr[:80]}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def screenshot(self, dest, height=None):
        h = height or self.js("document.documentElement.scrollHeight")
        shot = self.call("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": WIDTH, "height": h, "scale": 1}})
        Path(dest).write_bytes(base64.b64decode(shot["data"]))

    def mouse(self, kind, x, y):
        self.call("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y,
                                               "button": "left", "clickCount": 1})

    def close(self):
        try:
            self.call("Browser.close", timeout=10)
        except Failure:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise Failure(f"{' '.join(map(str, cmd))}: exit {p.returncode}: {p.stderr}")
    return p.stdout


def stats_kernels(text):
    lines = text.splitlines()
    i = next(n for n, l in enumerate(lines) if l.startswith("top kernels by total GPU time"))
    rows = []
    for l in lines[i + 2:]:
        if not l.startswith("  "):
            break
        total, launches, avg = l.split()[:3]
        rows.append((total, launches, avg))
    return rows


CHARTS = """Array.from(document.querySelectorAll('#charts .chart')).map(c => ({
  title: c.querySelector('h3').textContent,
  series: Number(c.querySelector('svg').dataset.series),
  paths: Array.from(c.querySelectorAll('path.series')).map(p => p.getAttribute('d').split('L').length),
  strips: c.querySelectorAll('rect.straggler').length,
  ticks: Array.from(c.querySelectorAll('.axis text')).map(t => t.textContent),
  height: c.querySelector('svg').getBoundingClientRect().height,
}))"""

TABLE = """(id => Array.from(document.querySelectorAll('#' + id + ' tbody tr')).map(
  r => Array.from(r.cells).map(c => c.innerText.trim())))"""


def check_charts(charts, want_titles, page):
    titles = [c["title"] for c in charts]
    for w in want_titles:
        if not any(t.startswith(w) for t in titles):
            raise Failure(f"{page}: no chart {w!r} in {titles}")
    for c in charts:
        if c["height"] < (60 if c["strips"] else 100):
            raise Failure(f"{page}: chart {c['title']!r} is not drawn ({c['height']} px)")
        if c["strips"]:
            continue
        if len(c["paths"]) != c["series"] or c["series"] == 0:
            raise Failure(f"{page}: chart {c['title']!r}: {len(c['paths'])} lines for {c['series']} series")
        if min(c["paths"]) < 2:
            raise Failure(f"{page}: chart {c['title']!r} has a line without points")
        if not any(":" in t for t in c["ticks"]):
            raise Failure(f"{page}: chart {c['title']!r} has no time axis: {c['ticks']}")


def check_fixture(b, cupmon, out):
    stats = run([cupmon, "stats", FIXTURE, "--top", "20"])
    page = out / "fixture.html"
    run([cupmon, "report", FIXTURE, "-o", page])
    b.open(page)
    charts = b.js(CHARTS)
    check_charts(charts, ["GPU busy", "kernels per second", "copy bandwidth"], page.name)
    rows = b.js(TABLE + "('kernels')")
    want = stats_kernels(stats)
    got = [(r[3], r[2], r[4]) for r in rows]
    if got != want:
        raise Failure(f"{page.name}: kernel table {got} != cupmon stats {want}")
    dropped = b.js("document.getElementById('dropped')")
    color = b.js("getComputedStyle(document.getElementById('dropped')).color")
    if color != "rgb(192, 25, 43)":
        raise Failure(f"{page.name}: unknown dropped records are not red ({color}, {dropped})")
    b.check_fits(page)
    b.screenshot(out / "fixture.png")
    print(f"check_report: fixture: {len(charts)} charts, {len(rows)} kernels as in cupmon stats, "
          f"no console error or failed load")


def check_run(b, cupmon, make_run, out, screenshot):
    run_dir = out / "prof"
    shutil.rmtree(run_dir, ignore_errors=True)
    run([make_run, run_dir, "4", "900", "250"])
    # The launcher (torchrun's own process) under `cupmon run`: a dump that recorded
    # nothing. The page must not point its "Next" command at it.
    launcher = run_dir / "4000-20261201T093000Z"
    (launcher / "segments").mkdir(parents=True)
    meta = json.dumps({"pid": 4000, "meta_version": 2, "session_open": False,
                       "dropped_records": 0, "cupti_version": 130001}).encode()
    (launcher / "cupti_monitor_meta.bin").write_bytes(
        b"CUPMMETA" + struct.pack("<II", 2, len(meta)) + meta)
    page = out / "report.html"
    # Relative names, as a user types them (the page shows them).
    run([cupmon, "report", "prof", "-o", "report.html"], cwd=out)
    size = page.stat().st_size
    b.open(page)
    charts = b.js(CHARTS)
    check_charts(charts, ["GPU busy", "kernels per second", "copy bandwidth",
                          "time in NCCL kernels", "slowest rank per minute"], page.name)
    ranks = b.js(TABLE + "('rank-table')")
    if [r[0] for r in ranks if r[0].startswith("rank")] != ["rank 0", "rank 1", "rank 2", "rank 3"]:
        raise Failure(f"{page.name}: rank table {ranks}")
    slow = b.js(TABLE + "('stragglers')")
    if not slow or any(r[1] != "rank 2" for r in slow):
        raise Failure(f"{page.name}: the straggler is rank 2, the table says {slow}")
    hint = b.js("document.getElementById('hint-command').textContent")
    if "cupmon decode" not in hint or "--from" not in hint or launcher.name in hint:
        raise Failure(f"{page.name}: hint {hint!r}")
    links = b.js("Array.from(document.querySelectorAll('a.window-link')).map(a => a.href)")
    marks = b.js("document.querySelectorAll('#charts a rect.window').length")
    if len(links) != 1 or not links[0].endswith("window-0.trace.json.gz") or marks < 1:
        raise Failure(f"{page.name}: window links {links}, {marks} marks")
    target = Path(links[0].removeprefix("file://"))
    if not target.is_file():
        raise Failure(f"{page.name}: the window link leads nowhere: {target}")
    # Drag across the middle of the first chart: every chart's time axis zooms.
    box = b.js("(r => [r.left, r.top, r.width, r.height])(document.querySelector('#charts svg').getBoundingClientRect())")
    x0, y0, w, h = box
    before = [c["ticks"] for c in charts]
    b.js(f"window.scrollTo(0, 0)")
    b.mouse("mousePressed", x0 + w * 0.45, y0 + h / 2)
    b.mouse("mouseMoved", x0 + w * 0.5, y0 + h / 2)
    b.mouse("mouseReleased", x0 + w * 0.55, y0 + h / 2)
    after = [c["ticks"] for c in b.js(CHARTS)]
    changed = sum(1 for x, y in zip(before, after) if x != y)
    if changed != len(charts):
        raise Failure(f"{page.name}: a drag zoomed {changed} of {len(charts)} charts")
    b.js("document.querySelector('#charts svg').dispatchEvent(new MouseEvent('dblclick', {bubbles: true}))")
    if [c["ticks"] for c in b.js(CHARTS)] != before:
        raise Failure(f"{page.name}: double-click did not zoom out")
    b.check_clean(page)
    b.check_fits(page)
    b.screenshot(out / "report.png")
    if screenshot:
        # The top of the page: header, hint and charts.
        top = b.js("document.getElementById('windows').getBoundingClientRect().top + scrollY")
        b.screenshot(screenshot, int(top))
        print(f"check_report: wrote {screenshot}")
    print(f"check_report: run of 4 ranks: {len(charts)} charts, page {size} bytes, straggler "
          f"rank 2 in {len(slow)} minutes, zoom and window link work")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cupmon", required=True)
    ap.add_argument("--make-run", required=True)
    ap.add_argument("--chromium", required=True)
    ap.add_argument("--out", default=None, help="where pages and screenshots go")
    ap.add_argument("--screenshot", default=None, help="also write the run's screenshot here")
    a = ap.parse_args()
    out = Path(a.out or tempfile.mkdtemp(prefix="cupmon-report-check-"))
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as profile:
        b = Browser(a.chromium, profile)
        try:
            check_fixture(b, a.cupmon, out)
            check_run(b, a.cupmon, a.make_run, out, a.screenshot)
        except Failure as e:
            print(f"check_report: FAILED: {e}", file=sys.stderr)
            return 1
        finally:
            b.close()
    print(f"check_report: 2 passed, 0 failed (pages and screenshots in {out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
