"""Service settings, read from the environment with the ``PGS_`` prefix."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

MIB = 1024 * 1024


class Settings(BaseSettings):
    """Everything the server and its worker processes need to know.

    The object is picklable: the worker entry point receives it as an argument instead of reading
    the environment again, so a pool on another machine would run with the server's settings.
    """

    model_config = SettingsConfigDict(env_prefix="PGS_", extra="ignore")

    data_dir: Path = Path("./var")
    # None means a SQLite file inside data_dir (filled in by the validator below).
    database_url: str = ""
    workers: int = Field(default_factory=lambda: os.cpu_count() or 1, ge=1, le=256)
    # Comma-separated bearer tokens; empty means no authentication.
    api_keys: SecretStr = SecretStr("")
    allow_anonymous: bool = False
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    log_level: str = "info"

    max_upload_bytes: int = Field(default=256 * MIB, ge=1)
    # Guard against gzip bombs: the decompressed stream may not grow past this.
    max_decompressed_bytes: int = Field(default=2048 * MIB, ge=1)
    max_predict_bytes: int = Field(default=64 * MIB, ge=1)
    model_cache_size: int = Field(default=32, ge=1)

    sqlite_busy_timeout_s: float = Field(default=15.0, gt=0)
    # How often a worker writes progress and looks for a cancel request (plus up to one solver
    # chunk, ~0.2 s): together they bound the cancel latency.
    progress_interval_s: float = Field(default=0.25, gt=0)
    # A job whose worker died is run again until it has been started this many times.
    max_attempts: int = Field(default=2, ge=1)
    # Start one worker (and its Numba warm-up) when the app starts instead of at the first job.
    prestart_workers: bool = True
    numba_cache_dir: Path | None = None

    @model_validator(mode="after")
    def _resolve_paths(self) -> Settings:
        # Absolute paths, so worker processes and a changed cwd see the same files.
        self.data_dir = self.data_dir.expanduser().resolve()
        if not self.database_url:
            self.database_url = f"sqlite:///{self.data_dir / 'pgs.db'}"
        if self.numba_cache_dir is None:
            env = os.environ.get("NUMBA_CACHE_DIR")
            self.numba_cache_dir = Path(env) if env else self.data_dir / "numba-cache"
        return self

    @property
    def api_key_set(self) -> frozenset[str]:
        raw = self.api_keys.get_secret_value()
        return frozenset(k.strip() for k in raw.split(",") if k.strip())

    @property
    def datasets_dir(self) -> Path:
        return self.data_dir / "datasets"

    @property
    def models_dir(self) -> Path:
        return self.data_dir / "models"

    @property
    def tmp_dir(self) -> Path:
        return self.data_dir / "tmp"


@lru_cache
def get_settings() -> Settings:
    """The process-wide settings; tests build their own ``Settings`` and pass it to create_app."""
    return Settings()
