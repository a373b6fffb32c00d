# The PGS service: uvicorn + a process pool, SQLite and files under /opt/pgs/var (a volume).
# Build: docker build -t pgs-service .      Run: see docker-compose.yml and docs/how-to/cluster.md
# Where no image registry answers, scripts/docker-base-images.sh builds python:3.11-slim first.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    # Compiled Numba kernels: filled at build time (below), readable and writable by the app user.
    NUMBA_CACHE_DIR=/opt/pgs/numba-cache \
    PGS_DATA_DIR=/opt/pgs/var \
    PGS_HOST=0.0.0.0 \
    PGS_PORT=8000

WORKDIR /opt/pgs
RUN useradd --system --create-home --uid 10001 --user-group pgs

# The dependencies first, in a layer of their own: a change to the code (or the README) reuses
# it instead of downloading and installing them again; only a change to pyproject.toml or
# constraints.txt does not. The solver's (the core dependencies) and the service's (the
# [service] extra), at the versions constraints.txt pins, so a rebuild installs what was tested.
COPY pyproject.toml constraints.txt ./
RUN python -m pip install --upgrade pip \
    && python -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; print(*p['dependencies'], *p['optional-dependencies']['service'], sep='\n')" \
        > /tmp/requirements.txt \
    && python -m pip install -c constraints.txt -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt

# The solver and its compiled kernels before the service's code, so that a change to app/ alone
# keeps them. Warm-up at build: every kernel signature is compiled into the image's cache (one
# process per solver family), so a job's fit loads its kernels in milliseconds instead of compiling
# them for seconds.
# (.dockerignore keeps the rest of the repository, the venv and var/ out of the context.)
COPY solver ./solver
RUN mkdir -p /opt/pgs/numba-cache /opt/pgs/var \
    && python -m solver.warmup \
    && chown -R pgs:pgs /opt/pgs/numba-cache /opt/pgs/var

# README and LICENSE: the package metadata pyproject.toml names.
COPY README.md LICENSE ./
COPY app ./app
# The upload parser's kernels into the same cache (an upload would otherwise compile them).
RUN python -m pip install --no-deps . \
    && python -m app.services.datasets.svmlight_kernel \
    && python -m app.services.datasets.column_stats \
    && chown -R pgs:pgs /opt/pgs/numba-cache

USER pgs
VOLUME ["/opt/pgs/var"]
EXPOSE 8000

# No curl in the slim image: ask /readyz with the standard library.
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/readyz', timeout=2).status != 200)"]

# PGS_HOST=0.0.0.0: the server refuses to start unless PGS_API_KEYS is set (or
# PGS_ALLOW_ANONYMOUS=1); docker-compose.yml reads the keys from .env.
CMD ["python", "-m", "app"]
