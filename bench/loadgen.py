"""The open tabs of `open-tabs` (bench.open_tabs), as a separate process:
`python -m bench.loadgen PLAN.json`, which prints one line of JSON per step.

Open loop, on a schedule made before the clock starts: each tab polls at its own moment
of the interval (spread evenly at random) and again every interval after, whether the
site has answered its earlier polls or not, as a browser's timer does. A request's time
runs from its scheduled moment to its answer's last byte, so a site (or a generator)
falling behind is counted, not hidden (no coordinated omission).

Cheap on purpose, to leave the machine's cores to the site: the standard library only,
a plain HTTP/1.1 request written as bytes made in advance, one connection per request
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

import asyncio
import json
import os
import random
import resource
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


class Exchange(asyncio.Protocol):
    """One request on its own connection: written when connected, the answer gathered
    until the server closes (gunicorn's sync worker closes after each answer)."""

    def __init__(self, request: bytes, done: asyncio.Future[bytes]) -> None:
        self.request, self.done, self.answer = request, done, bytearray()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        self.answer += data

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_result(bytes(self.answer))


async def poll(tab: Tab, port: int, due: float, timeout: float) -> tuple[float, int]:
    """One poll at its moment `due` (the loop's clock): its time in ms, and its status."""
    loop = asyncio.get_running_loop()
    match = b"If-None-Match: " + tab.etag + b"\r\n" if tab.etag else b""
    done: asyncio.Future[bytes] = loop.create_future()
    transport = None
    status = 0
    try:
        async with asyncio.timeout(timeout):
            transport, _ = await loop.create_connection(
                lambda: Exchange(tab.head + match + b"\r\n", done), "127.0.0.1", port
            )
            answer = await done
        status = int(answer[9:12])
        if status in (200, 304):
            tab.etag = etag_of(answer) or tab.etag
            return (loop.time() - due) * 1000, status
    except (OSError, TimeoutError, ValueError):
        if transport is not None:
            transport.abort()
    return FAILED, status


def etag_of(answer: bytes) -> bytes:
    head = answer.split(b"\r\n\r\n", 1)[0]
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"etag":
            return value.strip()
    return b""


async def step(tabs: list[Tab], plan: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """The first len(tabs)... all `tabs` open for `seconds`, each polling every `interval`."""
    interval, seconds = float(plan["interval"]), float(plan["seconds"])
    schedule = sorted(
        (offset + k * interval, i)
        for i, offset in ((i, rng.uniform(0, interval)) for i in range(len(tabs)))
        for k in range(int((seconds - offset) // interval) + 1)
        if offset + k * interval < seconds
    )
    loop = asyncio.get_running_loop()
    start = loop.time() + 0.2
    pending = []
    for moment, index in schedule:
        due = start + moment
        delay = due - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        pending.append(loop.create_task(poll(tabs[index], plan["port"], due, plan["timeout"])))
    found = await asyncio.gather(*pending)
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


async def run(plan: dict[str, Any]) -> None:
    rng = random.Random(20_261_127)
    tabs = [
        Tab(request_head(path, cookie, plan["host"], i))
        for i, (path, cookie) in enumerate(plan["tabs"])
    ]
    # Each worker's first requests import and compile what the polls need: not counted.
    await step(tabs[: plan["warmup"]], {**plan, "interval": 1.0, "seconds": 3.0}, rng)
    server = int(plan["server_pid"])
    for count in plan["steps"]:
        began, site, machine = cpu_seconds(), workers_cpu(server), machine_ticks()
        found = await step(tabs[:count], plan, rng)
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
    asyncio.run(run(plan))
    print(json.dumps({"done_s": round(time.perf_counter() - started, 1)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
