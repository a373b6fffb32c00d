"""Throwaway infrastructure for the cluster and fault tests, as plain processes on 127.0.0.1.

* :class:`Postgres`: ``initdb`` into a temp dir and ``pg_ctl start`` on a free port. PostgreSQL
  refuses to run as root, so as root (CI) every command runs as the ``postgres`` user through
  ``runuser`` on a directory that user owns.
* :class:`DaskCluster`: a real ``dask scheduler`` and N ``dask worker`` processes (with nannies,
  as deployed: a killed worker process is restarted by its nanny).
* :class:`ApiServer`: ``python -m app`` (uvicorn) with the given ``PGS_*`` environment.

Nothing here is mocked; every process is started in a session of its own and stopped by pid.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[2]
NUMBA_CACHE = os.environ.get("NUMBA_CACHE_DIR", str(REPO / "var" / "numba-cache"))
PG_USER = "postgres"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until(check: Any, timeout: float, what: str, interval: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
            if last:
                return last
        except Exception as exc:  # the thing is not up yet
            last = exc
        time.sleep(interval)
    raise AssertionError(f"{what} not reached in {timeout} s (last: {last!r})")


def stop_process(proc: subprocess.Popen[Any], sig: int = signal.SIGTERM, timeout: float = 20) -> None:
    """Stop a process started with start_new_session=True, and its group."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


# -- PostgreSQL --------------------------------------------------------------------------------


def postgres_bin_dir() -> Path | None:
    """Where initdb/pg_ctl/postgres are: the PATH, else Debian's versioned directory."""
    found = shutil.which("pg_ctl")
    if found and shutil.which("initdb") and shutil.which("postgres"):
        return Path(found).parent
    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if all((Path(d) / b).exists() for b in ("initdb", "pg_ctl", "postgres")):
            return Path(d)
    return None


def postgres_unavailable_reason() -> str | None:
    if postgres_bin_dir() is None:
        return "PostgreSQL binaries (initdb, pg_ctl, postgres) not found on PATH or /usr/lib/postgresql"
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            return "running as root without runuser: cannot start PostgreSQL as another user"
        try:
            import pwd

            pwd.getpwnam(PG_USER)
        except KeyError:
            return f"running as root and there is no {PG_USER!r} user to run PostgreSQL as"
    return None


class Postgres:
    """A private PostgreSQL server: trust auth on 127.0.0.1 only, fsync off (throwaway data)."""

    def __init__(self) -> None:
        reason = postgres_unavailable_reason()
        if reason:
            raise RuntimeError(reason)
        self.bin = postgres_bin_dir()
        assert self.bin is not None
        # Directly under the system temp dir: as root, every parent of the data dir must be
        # searchable by the postgres user, and pytest's tmp_path parents are private (0700).
        self.root = Path(tempfile.mkdtemp(prefix="pgs-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port = free_port()
        self.as_root = os.geteuid() == 0
        if self.as_root:
            shutil.chown(self.root, PG_USER, PG_USER)
            os.chmod(self.root, 0o700)

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://{PG_USER}@127.0.0.1:{self.port}/pgs"

    def _run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        cmd = [str(self.bin / args[0]), *args[1:]]
        if self.as_root:
            cmd = ["runuser", "-u", PG_USER, "--", *cmd]
        done = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, cwd="/", stdin=subprocess.DEVNULL
        )
        if done.returncode != 0:
            raise subprocess.CalledProcessError(
                done.returncode, cmd, done.stdout, f"{done.stderr}\n(server log: {self.log})"
            )
        return done

    def init(self) -> Postgres:
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            PG_USER,
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--no-sync",
            "--no-instructions",
        )
        self.start()
        import psycopg

        with psycopg.connect(
            f"host=127.0.0.1 port={self.port} user={PG_USER} dbname=postgres", autocommit=True
        ) as conn:
            conn.execute("CREATE DATABASE pgs")
        return self

    def new_database(self, name: str) -> str:
        """A fresh, empty database (one per test); returns its URL."""
        import psycopg

        with psycopg.connect(
            f"host=127.0.0.1 port={self.port} user={PG_USER} dbname=postgres", autocommit=True
        ) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return f"postgresql+psycopg://{PG_USER}@127.0.0.1:{self.port}/{name}"

    def start(self) -> None:
        opts = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.root} -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", opts, "-w", "-t", "60", "start")

    def stop(self, mode: str = "fast") -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def destroy(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)


@contextlib.contextmanager
def throwaway_postgres() -> Iterator[Postgres]:
    """A private server for the block, destroyed after it; skips the test where PostgreSQL
    cannot run here."""
    import pytest

    pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[dev]')")
    reason = postgres_unavailable_reason()
    if reason:
        pytest.skip(reason)
    pg = Postgres().init()
    try:
        yield pg
    finally:
        pg.destroy()


# -- Dask --------------------------------------------------------------------------------------


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {**os.environ, "NUMBA_CACHE_DIR": NUMBA_CACHE, "PYTHONPATH": str(REPO)}
    # Keep a distributed config of the developer's out of the tests; quiet logs.
    env.update(
        {"DASK_DISTRIBUTED__LOGGING__DISTRIBUTED": "warning", "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    )
    env.update(extra or {})
    return env


class DaskCluster:
    """``worker_env(i)``: extra environment of worker ``i`` (e.g. a store cache of its own)."""

    def __init__(
        self,
        n_workers: int = 2,
        log_dir: Path | None = None,
        worker_env: Callable[[int], dict[str, str]] | None = None,
    ) -> None:
        self.n_workers = n_workers
        self.worker_env = worker_env or (lambda _i: {})
        self.port = free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.log_dir = Path(log_dir or tempfile.mkdtemp(prefix="pgs-dask-"))
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.scheduler: subprocess.Popen[bytes] | None = None
        self.workers: list[subprocess.Popen[bytes]] = []

    def _spawn(
        self, name: str, args: list[str], env: dict[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        log = open(self.log_dir / f"{name}.log", "wb")  # noqa: SIM115 - owned by the process
        return subprocess.Popen(
            [sys.executable, "-m", *args],
            cwd=REPO,
            env=_env(env),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )

    def start(self) -> DaskCluster:
        self.scheduler = self._spawn(
            "scheduler",
            [
                "distributed.cli.dask_scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--no-dashboard",
                "--no-show",
            ],
        )
        for i in range(self.n_workers):
            self.workers.append(
                self._spawn(
                    f"worker-{i}",
                    [
                        "distributed.cli.dask_worker",
                        self.address,
                        "--host",
                        "127.0.0.1",
                        "--nworkers",
                        "1",
                        "--nthreads",
                        "1",
                        "--no-dashboard",
                        "--memory-limit",
                        "0",
                        "--name",
                        f"w{i}",
                        "--death-timeout",
                        "60",
                    ],
                    self.worker_env(i),
                )
            )
        wait_until(
            lambda: self.worker_count() >= self.n_workers, 90, f"{self.n_workers} Dask workers connected"
        )
        return self

    def worker_count(self) -> int:
        from distributed import Client

        with Client(self.address, timeout=5, set_as_default=False) as c:
            return len(c.scheduler_info(n_workers=-1)["workers"])

    def worker_pids(self) -> list[int]:
        """The pids of the processes that run tasks (the nannies' children)."""
        from distributed import Client

        with Client(self.address, timeout=5, set_as_default=False) as c:
            return sorted(c.run(os.getpid).values())

    def stop(self) -> None:
        # Throwaway processes: SIGKILL their groups (nanny and worker) instead of a graceful
        # close that takes seconds per worker.
        for w in self.workers:
            stop_process(w, signal.SIGKILL)
        if self.scheduler is not None:
            stop_process(self.scheduler, signal.SIGKILL)


# -- the API -----------------------------------------------------------------------------------


class ApiServer:
    """``python -m app`` on a free loopback port, anonymous, in a process group of its own.
    ``src`` is the checkout it serves (another one lets a benchmark compare two commits with this
    virtual environment); ``env`` overrides settings."""

    def __init__(self, data_dir: Path, log_path: Path, *, src: Path = REPO, **env: str) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self.src = src
        self.env = _env(
            {
                "PYTHONPATH": str(src),
                "PGS_DATA_DIR": str(data_dir),
                "PGS_HOST": "127.0.0.1",
                "PGS_PORT": str(self.port),
                "PGS_API_KEYS": "",
                "PGS_LOG_LEVEL": "warning",
                "PGS_PROGRESS_INTERVAL_S": "0.1",
                **env,
            }
        )
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 120, ready_path: str = "/readyz") -> ApiServer:
        """Start it and wait for ``ready_path`` to answer 200 (/readyz: the workers are warm)."""
        log = open(self.log_path, "ab")  # noqa: SIM115 - owned by the process
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "app"],
            cwd=self.src,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )

        def ready() -> bool:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"the API exited; see {self.log_path}:\n" + self.log_path.read_text()[-3000:]
                )
            return httpx.get(f"{self.base}{ready_path}", timeout=2).status_code == 200

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if ready():
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise AssertionError(f"the API did not become ready; see {self.log_path}")

    def kill(self) -> None:
        """SIGKILL the API process group (uvicorn and its local pool, if any)."""
        if self.proc is not None:
            stop_process(self.proc, signal.SIGKILL)

    def stop(self) -> bool:
        """Graceful stop (SIGTERM); True if the server exited by itself, cleanly (uvicorn
        re-raises the signal after its graceful shutdown, so -SIGTERM counts as clean)."""
        if self.proc is None:
            return False
        stop_process(self.proc, signal.SIGTERM, timeout=60)
        return self.proc.returncode in (0, -signal.SIGTERM)

    def assert_clean_log(self) -> None:
        """No traceback in the server's log (errors the HTTP answers would not show)."""
        text = self.log_path.read_text(errors="replace")
        assert "Traceback" not in text, text[-4000:]

    @contextlib.contextmanager
    def client(self) -> Iterator[httpx.Client]:
        with httpx.Client(base_url=self.base, timeout=60) as c:
            yield c


@contextlib.contextmanager
def running_service(root: Path, *, clean_log: bool = True, **env: str) -> Iterator[ApiServer]:
    """``python -m app`` with one pool worker (unless ``env`` says otherwise) on a fresh data dir
    under ``root``, for the block; its log must hold no traceback unless ``clean_log`` is False (a
    test that provokes faults)."""
    root.mkdir(parents=True, exist_ok=True)
    server = ApiServer(root / "var", root / "server.log", **{"PGS_WORKERS": "1", **env}).start()
    try:
        yield server
    finally:
        server.stop()
    if clean_log:
        server.assert_clean_log()


FINAL = ("succeeded", "failed", "cancelled")
# Short leases so that the tests see recovery within seconds (defaults: 5 s / 30 s / 2 s).
FAST_LEASES = {"PGS_HEARTBEAT_S": "0.5", "PGS_LEASE_S": "3", "PGS_SWEEP_INTERVAL_S": "0.5"}


def cluster_env(pg_url: str, cluster: DaskCluster) -> dict[str, str]:
    """Environment for an ApiServer on a PostgreSQL database and a Dask cluster."""
    return {
        "PGS_DATABASE_URL": pg_url,
        "PGS_EXECUTOR": cluster.address.replace("tcp://", "dask://"),
        **FAST_LEASES,
    }


def backend_env(setup: str, root: Path, stack: Any) -> dict[str, str]:
    """Environment for an ApiServer: "local" (SQLite, one pool worker) or "cluster" (a throwaway
    PostgreSQL and a two-worker Dask cluster, stopped through ``stack``, an ExitStack)."""
    env: dict[str, str] = {"PGS_LOG_LEVEL": "warning"}
    if setup == "local":
        env["PGS_WORKERS"] = "1"
        return env
    pg = Postgres().init()
    stack.callback(pg.destroy)
    cluster = DaskCluster(n_workers=2, log_dir=root / "dask").start()
    stack.callback(cluster.stop)
    env.update(PGS_DATABASE_URL=pg.url, PGS_EXECUTOR=cluster.address.replace("tcp://", "dask://"))
    return env


def poll_job(
    client: httpx.Client, job_id: int, done: Any = None, timeout: float = 120, interval: float = 0.1
) -> Any:
    """Poll every ``interval`` seconds until ``done(job)`` (default: a final status); returns
    the job."""
    done = done or (lambda j: j["status"] in FINAL)

    def check() -> Any:
        job = client.get(f"/v1/jobs/{job_id}").json()
        return job if done(job) else None

    return wait_until(check, timeout, f"job {job_id} condition", interval=interval)


def tiny_svmlight(n: int = 400, d: int = 20, seed: int = 0) -> bytes:
    """A separable-ish binary problem, generated: the cluster tests need no shared data."""
    import numpy as np

    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    lines = []
    for _ in range(n):
        idx = np.sort(rng.choice(d, size=5, replace=False))
        val = rng.normal(size=5)
        label = 1 if float(val @ w[idx]) > 0 else -1
        lines.append(f"{label} " + " ".join(f"{i + 1}:{v:.4f}" for i, v in zip(idx, val, strict=True)))
    return ("\n".join(lines) + "\n").encode()
