"""What a run cannot show about docker-compose.yml: it holds no secret. The API keys and the
database password come from .env, which neither git nor the image's build context takes in."""

from __future__ import annotations

import pytest

from tests.cluster.harness import REPO

yaml = pytest.importorskip("yaml", reason="PyYAML (a dependency of dask) is not installed")


def test_secrets_come_from_dotenv_only():
    services = yaml.safe_load((REPO / "docker-compose.yml").read_text())["services"]
    for name, service in services.items():
        env = service.get("environment", {})
        assert "PGS_API_KEYS" not in env, f"{name}: API keys belong in .env"
        for key in ("POSTGRES_PASSWORD", "PGS_DATABASE_URL"):
            if key in env:
                assert "${PGS_DB_PASSWORD:-}" in env[key], f"{name}: {key} must take the password from .env"
    for ignore_file in (".gitignore", ".dockerignore"):
        assert ".env" in (REPO / ignore_file).read_text().split(), f".env missing from {ignore_file}"
