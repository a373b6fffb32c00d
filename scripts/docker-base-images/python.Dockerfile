# A stand-in for python:3.11-slim: Debian bookworm's Python 3.11 behind the paths the official
# image has (`python` and `pip` on PATH, pip free to install into the system interpreter).
FROM pgs-standin/debian:bookworm
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-pip python3-venv ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && ln -s /usr/bin/python3 /usr/local/bin/python \
    && ln -s /usr/bin/pip3 /usr/local/bin/pip \
    # The official image's interpreter is its own; Debian's refuses `pip install` without this.
    && rm -f /usr/lib/python3.11/EXTERNALLY-MANAGED
# The host's pip configuration and CA bundle (copied into the build context by the script), so pip
# inside `docker build` reaches the package index the way the host does.
COPY pip.conf /etc/pip.conf
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
ENV LANG=C.UTF-8
CMD ["python3"]
