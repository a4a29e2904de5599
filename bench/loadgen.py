"""The open tabs of `open-tabs` (bench.open_tabs), as a separate process:
`python -m bench.loadgen PLAN.json`, which prints one line of JSON per step.

Open loop, on a schedule made before the clock starts: each tab polls at its own moment
of the interval (spread evenly at random) and again every interval after, whether the
site has answered its earlier polls or not, as a browser's timer does. A request's time
runs from its scheduled moment to its answer's last byte, so a site (or a generator)
falling behind is counted, not hidden (no coordinated omission).

Cheap on purpose, to leave the machine's cores to the site: the standard library only,
one thread and a selector (no task per request), a plain HTTP/1.1 request written as
bytes made in advance, one non-blocking connection per request
(gunicorn's sync workers close each after its answer; the browser's proxy would hold
its own connections to the browsers), only the status line read. Its CPU time is
reported beside the figures (`loadgen_cpu_s`), so a reader sees what it took from the site.

What a tab asks is what games/static/games/live.js asks: its poll URL (with
`visible=1`, the tab is visible: a hidden tab does not poll), `Accept:
application/json`, the session cookie, and `If-None-Match` with the ETag of its last
answer once it has one (then most answers are a 304). The proxy's headers are those of
the README's deployment (a TLS proxy in front): `Host`, `X-Forwarded-Proto: https`,
`X-Forwarded-For`.

The plan (JSON): {"port", "host", "server_pid", "interval", "seconds", "steps": [N, ...],
"warmup", "limit_ms", "timeout", "tabs": [[path, cookie], ...]}; the first N tabs are
open in a step of N, each keeping its ETag from one step to the next, after `warmup`
tabs polled for a few seconds (not counted: each worker's first requests import and
compile). Steps stop after the first whose p95 reaches `limit_ms` or that has failures.
Beside each step: the CPU time the server's workers used per request (the database's
is not theirs), this generator's, and how busy the whole machine was.
"""

from __future__ import annotations

import errno
import json
import os
import random
import resource
import selectors
import socket
import sys
import time
from typing import Any

FAILED = -1.0  # a request's time when it failed (no answer, or neither a 200 nor a 304)


class Tab:
    def __init__(self, head: bytes) -> None:
        self.head = head  # the request's bytes but If-None-Match and the blank line
        self.etag = b""


def request_head(path: str, cookie: str, host: str, number: int) -> bytes:
    address = f"10.{number // 65536 % 256}.{number // 256 % 256}.{number % 256}"
    return (
        f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept: application/json\r\n"
        f"Cookie: {cookie}\r\nX-Forwarded-Proto: https\r\nX-Forwarded-For: {address}\r\n"
        "Connection: close\r\n"
    ).encode()


class Poll:
    """One request on its own non-blocking connection: written once connected, the
    answer gathered until the server closes (gunicorn's sync worker closes after each)."""

    def __init__(self, tab: Tab, due: float) -> None:
        self.tab, self.due = tab, due
        match = b"If-None-Match: " + tab.etag + b"\r\n" if tab.etag else b""
        self.request = tab.head + match + b"\r\n"
        self.answer = bytearray()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setblocking(False)

    def ended(self, now: float) -> tuple[float, int]:
        """Its time in ms and status, once the server closed (the tab keeps the ETag)."""
        self.sock.close()
        try:
            status = int(self.answer[9:12])
        except ValueError:
            return FAILED, 0
        if status not in (200, 304):
            return FAILED, status
        self.tab.etag = etag_of(bytes(self.answer)) or self.tab.etag
        return (now - self.due) * 1000, status


def etag_of(answer: bytes) -> bytes:
    head = answer.split(b"\r\n\r\n", 1)[0]
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"etag":
            return value.strip()
    return b""


def step(tabs: list[Tab], plan: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """All `tabs` open for `seconds`, each polling every `interval` at its own moment:
    one thread, one selector, no task or coroutine per request (the generator's own
    cost per request stays near the kernel's)."""
    interval, seconds = float(plan["interval"]), float(plan["seconds"])
    schedule = sorted(
        (offset + k * interval, i)
        for i, offset in ((i, rng.uniform(0, interval)) for i in range(len(tabs)))
        for k in range(int((seconds - offset) // interval) + 1)
        if offset + k * interval < seconds
    )
    address, timeout = ("127.0.0.1", int(plan["port"])), float(plan["timeout"])
    selector = selectors.DefaultSelector()
    found: list[tuple[float, int]] = []
    flying: dict[int, Poll] = {}
    start = time.monotonic() + 0.2
    next_up = 0
    while next_up < len(schedule) or flying:
        now = time.monotonic()
        while next_up < len(schedule) and start + schedule[next_up][0] <= now:
            moment, index = schedule[next_up]
            next_up += 1
            poll = Poll(tabs[index], start + moment)
            if poll.sock.connect_ex(address) not in (0, errno.EINPROGRESS):
                poll.sock.close()
                found.append((FAILED, 0))
                continue
            flying[poll.sock.fileno()] = poll
            selector.register(poll.sock, selectors.EVENT_WRITE, poll)
        wait = start + schedule[next_up][0] - now if next_up < len(schedule) else 0.05
        for key, events in selector.select(max(0.0, min(wait, 0.05))):
            poll = key.data
            try:
                if events & selectors.EVENT_WRITE:
                    if poll.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                        raise OSError("refused")
                    poll.sock.send(poll.request)  # a few hundred bytes: one send
                    selector.modify(poll.sock, selectors.EVENT_READ, poll)
                    continue
                data = poll.sock.recv(65536)
                if data:
                    poll.answer += data
                    continue
                selector.unregister(poll.sock)
                del flying[poll.sock.fileno()]
                found.append(poll.ended(time.monotonic()))
            except OSError:
                selector.unregister(poll.sock)
                del flying[poll.sock.fileno()]
                poll.sock.close()
                found.append((FAILED, 0))
        now = time.monotonic()
        for fd, poll in list(flying.items()):
            if now - poll.due > timeout:
                selector.unregister(poll.sock)
                del flying[fd]
                poll.sock.close()
                found.append((FAILED, 0))
    selector.close()
    times = sorted(t for t, _ in found if t != FAILED)
    statuses: dict[str, int] = {}
    for _, status in found:
        statuses[str(status)] = statuses.get(str(status), 0) + 1
    return {
        "tabs": len(tabs),
        "requests": len(found),
        "per_second": round(len(found) / seconds, 1),
        "failed": len(found) - len(times),
        "statuses": statuses,
        "p50_ms": round(quantile(times, 0.50), 1),
        "p95_ms": round(quantile(times, 0.95), 1) if len(times) == len(found) else None,
        "p99_ms": round(quantile(times, 0.99), 1),
        "max_ms": round(times[-1], 1) if times else None,
    }


def quantile(ordered: list[float], q: float) -> float:
    if not ordered:
        return float("inf")
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(plan: dict[str, Any]) -> None:
    rng = random.Random(20_261_127)
    tabs = [
        Tab(request_head(path, cookie, plan["host"], i))
        for i, (path, cookie) in enumerate(plan["tabs"])
    ]
    # Each worker's first requests import and compile what the polls need: not counted.
    step(tabs[: plan["warmup"]], {**plan, "interval": 1.0, "seconds": 3.0}, rng)
    server = int(plan["server_pid"])
    for count in plan["steps"]:
        began, site, machine = cpu_seconds(), workers_cpu(server), machine_ticks()
        found = step(tabs[:count], plan, rng)
        found["loadgen_cpu_s"] = round(cpu_seconds() - began, 2)
        found["site_cpu_ms_per_request"] = round(
            (workers_cpu(server) - site) * 1000 / (found["requests"] or 1), 2
        )
        busy, idle = (b - a for a, b in zip(machine, machine_ticks(), strict=True))
        found["machine_busy"] = round(busy / ((busy + idle) or 1), 2)
        print(json.dumps(found), flush=True)
        p95 = found["p95_ms"]
        if found["failed"] or p95 is None or p95 >= plan["limit_ms"]:
            return


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def workers_cpu(server: int) -> float:
    """The CPU seconds the server's workers (its child processes) have used: the site's
    own cost of the polls, the database's apart (Linux's /proc)."""
    clock = os.sysconf("SC_CLK_TCK")
    with open(f"/proc/{server}/task/{server}/children", encoding="ascii") as children:
        pids = children.read().split()
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:  # a worker gone (restarted): its time is lost to the figure
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / clock


def machine_ticks() -> tuple[int, int]:
    """The machine's CPU time, busy and idle (all cores, /proc/stat): how much of it the
    site, this generator and whatever else runs took during a step."""
    with open("/proc/stat", encoding="ascii") as stat:
        ticks = [int(n) for n in stat.readline().split()[1:]]
    idle = ticks[3] + ticks[4]  # idle, iowait
    return sum(ticks[:8]) - idle, idle


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as source:
        plan = json.load(source)
    started = time.perf_counter()
    run(plan)
    print(json.dumps({"done_s": round(time.perf_counter() - started, 1)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
