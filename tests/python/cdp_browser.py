"""A headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe): no
port, no WebSocket library. Loads a page, collects every console message, uncaught exception and
network request the page makes, evaluates JavaScript, clicks and types as a person would
(Input.dispatch*: real events at an element's position) and takes full-page screenshots."""
from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional


def chromium() -> Optional[str]:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class BrowserError(RuntimeError):
    pass


class Browser:
    def __init__(self, executable: str, width: int = 1400, height: int = 900,
                 timeout: float = 60.0):
        self.timeout = timeout
        self.width, self.height = width, height
        self._profile = tempfile.mkdtemp(prefix="jaxprof-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def wire_pipes():  # the browser reads commands on fd 3 and answers on fd 4
            a = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10)
            b = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self._proc = subprocess.Popen(
            [executable, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-extensions", "--hide-scrollbars", "--remote-debugging-pipe",
             "--host-resolver-rules=MAP * ~NOTFOUND", f"--user-data-dir={self._profile}",
             f"--window-size={width},{height}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=wire_pipes, pass_fds=(3, 4), env=dict(os.environ, HOME=self._profile))
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events: List[Dict[str, Any]] = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self._session = self.call("Target.attachToTarget",
                                  {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable")
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    # -- protocol
    def _read_message(self, deadline: float) -> Dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("no answer from chromium in time")
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if ready:
                chunk = os.read(self._from_browser, 1 << 20)
                if not chunk:
                    raise BrowserError("chromium closed the pipe")
                self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method: str, params: Optional[dict] = None, session: bool = False) -> dict:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self._session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def send(self, method: str, params: Optional[dict] = None) -> dict:
        """A command to the page."""
        return self.call(method, params, session=True)

    def wait_event(self, method: str, since: int = 0) -> dict:
        deadline = time.monotonic() + self.timeout
        while True:
            for e in self.events[since:]:
                if e["method"] == method:
                    return e
            since = len(self.events)
            self.events.append(self._read_message(deadline))

    # -- what a test does
    def load(self, path: Path, fragment: str = "") -> None:
        """Loads the file afresh (by way of about:blank, so that only a fragment differing from
        the page before still loads the page) with the events so far forgotten."""
        for url in ("about:blank", path.resolve().as_uri() + fragment):
            self.events.clear()
            self.send("Page.navigate", {"url": url})
            self.wait_event("Page.loadEventFired")

    def eval(self, expression: str) -> Any:
        r = self.send("Runtime.evaluate",
                      {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            raise BrowserError(f"{expression[:80]}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def click(self, selector_js: str) -> None:
        """A real mouse click at the middle of the element `selector_js` evaluates to."""
        box = self.eval(f"(function(){{var e={selector_js}; if(!e) return null;"
                        "e.scrollIntoView({block:'center'}); var r=e.getBoundingClientRect();"
                        "return [r.left + r.width / 2, r.top + r.height / 2];})()")
        if box is None:
            raise BrowserError(f"nothing to click: {selector_js}")
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1],
                                                   "button": "left", "clickCount": 1})

    def type_into(self, selector_js: str, text: str) -> None:
        self.click(selector_js)
        self.eval(f"(function(){{var e={selector_js}; e.select && e.select();}})()")
        if text:
            self.send("Input.insertText", {"text": text})
        else:  # clear: select all and delete
            self.send("Input.dispatchKeyEvent", {"type": "keyDown", "key": "Backspace",
                                                 "windowsVirtualKeyCode": 8})
            self.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": "Backspace",
                                                 "windowsVirtualKeyCode": 8})

    def screenshot(self, out: Path) -> Path:
        """The whole page, at the viewport's width."""
        size = self.send("Page.getLayoutMetrics")["cssContentSize"]
        shot = self.send("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": self.width,
                     "height": min(int(size["height"]), 30000), "scale": 1}})
        out.write_bytes(base64.b64decode(shot["data"]))
        return out

    def problems(self) -> List[str]:
        """Console output, uncaught exceptions, log entries and requests that left the file."""
        out = []
        for e in self.events:
            m, p = e["method"], e.get("params", {})
            if m == "Runtime.consoleAPICalled":
                out.append(f"console.{p['type']}: " + " ".join(
                    str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
            elif m == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                out.append("exception: " + d.get("exception", {}).get("description", d["text"]))
            elif m == "Log.entryAdded":
                out.append(f"log {p['entry']['level']}: {p['entry']['text']}")
            elif m == "Network.requestWillBeSent":
                url = p["request"]["url"]
                if not url.startswith(("file:", "data:", "about:")):
                    out.append(f"request: {url}")
        return out

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (BrowserError, OSError):
            pass
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
