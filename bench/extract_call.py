"""One small file's whole extraction call, through the reference service: a fork of the warm
template (LOOM_EXTRACTOR_WARM=on, the default) beside a fresh interpreter per extraction
(LOOM_EXTRACTOR_WARM=off), both services of this checkout started for the run, their calls
interleaved so the machine's load falls on both alike. Optionally a third service from another
checkout (`--baseline-checkout`, e.g. main before the template), run from its own extractor
environment (`--baseline-env`).

Each call is what Loom's client makes: a new connection, POST /v1/extract with a 40-byte
Markdown file, the artifact read back. Reported per service: the wall-clock p50 and p95 of a
call, and the CPU one call costs the service and its children (from /proc, so a busy machine's
waiting is left out of it).

    .venv/bin/python bench/extract_call.py [--calls 200]
    .venv/bin/python bench/extract_call.py --baseline-checkout /work/wt/base \\
        --baseline-env /opt/loom/extractor-venv-base

As root (as this project's machines run it), each service is started the way tests start one:
from the extractor environment scripts/setup builds (LOOM_EXTRACTOR_ENV), dropping to nobody, with
a world-readable copy of the checkout's package ahead of the environment's own.
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from loom_dagster.extractor.local import extractor_environment  # noqa: E402

SMALL_FILE = b"# A small file\n\nOne paragraph of text.\n"
LISTENING = re.compile(r"loom-extractor listening on (http://\S+)")
AS_ROOT = os.geteuid() == 0


@dataclass
class Service:
    label: str
    process: subprocess.Popen[str]
    url: str
    token: str
    walls_ms: list[float] = field(default_factory=list)
    cpu_ms: float = 0.0


def readable_copy(checkout: Path, into: Path) -> Path:
    """The checkout's extractor_sandbox in a directory every user can read."""
    root = into / checkout.name
    shutil.copytree(
        checkout / "extractor_sandbox",
        root / "extractor_sandbox",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    for path in [into, root, *root.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return root


def start(label: str, python: str, package: Path, env: dict[str, str]) -> Service:
    token = secrets.token_urlsafe(24)
    environment = {k: v for k, v in os.environ.items() if not k.startswith("LOOM_EXTRACTOR_")}
    environment.update(env, LOOM_EXTRACTOR_TOKEN=token, PYTHONPATH=str(package))
    user = ["--user", "nobody"] if AS_ROOT else []
    command = [python, "-P", "-s", "-m", "extractor_sandbox", "serve", "--port", "0", *user]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=environment
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    match = LISTENING.search(line)
    if match is None:
        process.kill()
        raise SystemExit(f"{label}: the service did not start ({line!r})")
    return Service(label, process, match.group(1), token)


def cpu_seconds(pid: int) -> float:
    """The service's CPU time and its reaped children's."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def call(http: httpx.Client, service: Service) -> float:
    started = time.perf_counter()
    response = http.post(
        f"{service.url}/v1/extract",
        params={"format": "markdown", "name": "small.md"},
        content=SMALL_FILE,
        headers={"Authorization": f"Bearer {service.token}"},
    )
    elapsed = (time.perf_counter() - started) * 1000
    if response.status_code != 200:
        raise SystemExit(f"{service.label}: {response.status_code} {response.text[:200]}")
    return elapsed


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200, help="calls per service")
    parser.add_argument("--baseline-checkout", type=Path, help="another checkout's service too")
    parser.add_argument(
        "--baseline-env", type=Path, help="its extractor environment (default: this one's)"
    )
    arguments = parser.parse_args()

    environment = extractor_environment() if AS_ROOT else None
    python = str(environment / "bin" / "python") if environment else sys.executable
    scratch = Path(tempfile.mkdtemp(prefix="loom-extract-call-"))
    scratch.chmod(0o755)
    services: list[Service] = []
    try:
        ours = readable_copy(ROOT, scratch / "this")
        services.append(start("warm (fork of the template)", python, ours, {}))
        services.append(
            start("fresh (LOOM_EXTRACTOR_WARM=off)", python, ours, {"LOOM_EXTRACTOR_WARM": "off"})
        )
        if arguments.baseline_checkout is not None:
            theirs = readable_copy(arguments.baseline_checkout.resolve(), scratch / "baseline")
            baseline_env = arguments.baseline_env or environment
            baseline_python = str(baseline_env / "bin" / "python") if baseline_env else python
            services.append(
                start(f"{arguments.baseline_checkout.name} (baseline)", baseline_python, theirs, {})
            )
        load_before = os.getloadavg()
        # A new connection per call, as Loom's client makes.
        with httpx.Client(timeout=120, limits=httpx.Limits(max_keepalive_connections=0)) as http:
            for service in services:
                for _ in range(5):
                    call(http, service)  # the first calls: a template warming, caches filling
            before = {service.label: cpu_seconds(service.process.pid) for service in services}
            for index in range(arguments.calls):
                order = services[index % len(services) :] + services[: index % len(services)]
                for service in order:
                    service.walls_ms.append(call(http, service))
            for service in services:
                spent = cpu_seconds(service.process.pid) - before[service.label]
                service.cpu_ms = spent * 1000 / arguments.calls
        load_after = os.getloadavg()
    finally:
        for service in services:
            service.process.terminate()
            service.process.wait(timeout=30)
            if service.process.stdout is not None:
                service.process.stdout.close()
        shutil.rmtree(scratch, ignore_errors=True)

    print(
        f"{arguments.calls} calls per service, interleaved; a {len(SMALL_FILE)}-byte Markdown"
        f" file; nproc {os.cpu_count()}, load average {load_before[0]:.1f} before,"
        f" {load_after[0]:.1f} after"
    )
    print(f"{'service':<34} {'p50 ms':>8} {'p95 ms':>8} {'mean ms':>8} {'CPU ms/call':>12}")
    for service in services:
        print(
            f"{service.label:<34} {percentile(service.walls_ms, 0.5):>8.1f}"
            f" {percentile(service.walls_ms, 0.95):>8.1f}"
            f" {statistics.fmean(service.walls_ms):>8.1f} {service.cpu_ms:>12.1f}"
        )
    warm, fresh = services[0], services[1]
    print(
        f"fresh / warm: p50 {percentile(fresh.walls_ms, 0.5) / percentile(warm.walls_ms, 0.5):.1f}x,"
        f" CPU {fresh.cpu_ms / warm.cpu_ms:.1f}x"
    )


if __name__ == "__main__":
    main()
