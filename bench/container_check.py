"""Build the container recipe (deploy/container/) and run it with PostgreSQL, as an operator would: a check, not a
test (it needs podman and a few minutes), run by hand before a release.

    .venv/bin/python bench/container_check.py [--keep]

1. Base images made locally with mmdebstrap (Debian bookworm: python3 and python3-venv for Notewell,
   postgresql-15 for the database) and imported into podman, once: no registry image is pulled.
2. The wheels of this checkout and of its dependencies (pip wheel, on the host), then the two images built
   (`podman build`): nothing is fetched inside a build.
3. compose.yaml brought up with podman-compose (installed from PyPI into a temporary venv), a random
   password; then /readyz must answer 200 naming the PostgreSQL store, a token minted inside the container
   must read the store over REST, and everything is taken down again (volumes too, unless --keep).

Needs: podman, runc or crun, mmdebstrap (apt-get install podman runc mmdebstrap). On a machine whose cgroups
crun refuses ("cgroups in hybrid mode not supported"), point CONTAINERS_CONF at a file with
`[engine] runtime = "runc"` and `cgroup_manager = "cgroupfs"` (docs/operations.md, "In a container").
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
RECIPE = ROOT / "deploy" / "container"
BASES = {"localhost/notewell-base:bookworm": "python3,python3-venv,ca-certificates",
         "localhost/notewell-postgres-base:bookworm": "postgresql-15,ca-certificates"}
PROJECT = "notewell-check"
READY = "http://127.0.0.1:8765/readyz"


def run(*args: str, env: dict[str, str] | None = None, capture: bool = False) -> str:
    print("+", " ".join(args), file=sys.stderr, flush=True)
    done = subprocess.run(args, check=True, text=True, env=env, capture_output=capture)
    return done.stdout if capture else ""


def has_image(name: str) -> bool:
    return subprocess.run(["podman", "image", "exists", name], check=False).returncode == 0


def base_images(tmp: Path) -> None:
    for name, packages in BASES.items():
        if has_image(name):
            continue
        tar = tmp / "base.tar"
        run("mmdebstrap", "--variant=apt", f"--include={packages}", "bookworm", str(tar))
        run("podman", "import", str(tar), name)
        tar.unlink()


def images(tmp: Path) -> None:
    context = tmp / "context"
    shutil.copytree(RECIPE, context)
    run(sys.executable, "-m", "pip", "wheel", "--quiet", "--wheel-dir", str(context / "wheelhouse"), str(ROOT))
    run("podman", "build", "--quiet", "-t", "localhost/notewell:latest", "-f", str(context / "Containerfile"),
        str(context))
    run("podman", "build", "--quiet", "-t", "localhost/notewell-postgres:15", "-f",
        str(context / "Containerfile.postgres"), str(context))


def compose_tool(tmp: Path) -> Path:
    venv = tmp / "compose-venv"
    run(sys.executable, "-m", "venv", str(venv))
    run(str(venv / "bin" / "pip"), "install", "--quiet", "podman-compose")
    return venv / "bin" / "podman-compose"


def ready(seconds: float) -> dict[str, object]:
    """/readyz's answer once it is 200 (the server restarts until PostgreSQL takes connections)."""
    deadline = time.monotonic() + seconds
    last = "no answer"
    while time.monotonic() < deadline:
        try:
            answer = httpx.get(READY, timeout=5)
            if answer.status_code == 200:
                found: dict[str, object] = answer.json()
                return found
            last = f"{answer.status_code} {answer.text[:200]}"
        except httpx.HTTPError as exc:
            last = type(exc).__name__
        time.sleep(1)
    raise SystemExit(f"/readyz did not answer 200 within {seconds:g} s: {last}")


def check() -> None:
    print("readyz:", json.dumps(ready(180)), flush=True)
    container, database = (run("podman", "ps", "--filter", f"label=io.podman.compose.project={PROJECT}", "--filter",
                               f"ancestor={image}", "--format", "{{.Names}}", capture=True).split()[0]
                           for image in ("localhost/notewell:latest", "localhost/notewell-postgres:15"))
    notewell = ["podman", "exec", container, "/opt/notewell/bin/notewell"]
    run(*notewell, "user", "add", "ops@example.test", "--role", "admin", "--handle", "ops")
    token = run(*notewell, "token", "mint", "--user", "ops@example.test", "--scopes", "knowledge:read",
                capture=True).strip().splitlines()[-1]
    projects = httpx.get("http://127.0.0.1:8765/api/v1/projects", headers={"Authorization": f"Bearer {token}"},
                         timeout=10)
    print("GET /api/v1/projects:", projects.status_code, projects.text[:200], flush=True)
    assert projects.status_code == 200, projects.text
    users = run("podman", "exec", database, "psql", "-h", "/tmp", "-p", "55432", "-U", "postgres", "-d", "notewell",
                "-tAc", "SELECT count(*) FROM users WHERE email = 'ops@example.test'", capture=True).strip()
    assert users == "1", f"the ops user is not in the compose file's PostgreSQL ({users!r})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="leave the volumes (the store) after the check")
    args = parser.parse_args()
    for tool in ("podman", "mmdebstrap"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is not installed: apt-get install podman runc mmdebstrap")
    env = {**os.environ, "NOTEWELL_PG_PASSWORD": secrets.token_urlsafe(24)}
    with tempfile.TemporaryDirectory(prefix="notewell-container-") as folder:
        tmp = Path(folder)
        started = time.monotonic()
        base_images(tmp)
        images(tmp)
        print(f"images built in {time.monotonic() - started:.0f} s", flush=True)
        compose = compose_tool(tmp)
        up = [str(compose), "-p", PROJECT, "-f", str(RECIPE / "compose.yaml")]
        run(*up, "up", "-d", env=env)
        try:
            check()
        finally:
            subprocess.run([*up, "logs"], check=False, env=env)
            run(*up, "down", *([] if args.keep else ["--volumes"]), env=env)
    print("the container recipe builds, serves PostgreSQL's store and answers REST", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
