# A stand-in for postgres:16: Debian bookworm's PostgreSQL (15; Debian ships no 16 for bookworm)
# behind the part of the official image's interface that docker-compose.yml uses.
FROM pgs-standin/debian:bookworm
RUN mkdir -p /etc/postgresql-common \
    # No cluster at install time: the entrypoint creates one in PGDATA, as the official image does.
    && echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.conf \
    && apt-get update \
    && apt-get install -y --no-install-recommends postgresql-15 \
    && rm -rf /var/lib/apt/lists/*
ENV PATH=/usr/lib/postgresql/15/bin:$PATH \
    PGDATA=/var/lib/postgresql/data \
    LANG=C.UTF-8
COPY postgres-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
VOLUME ["/var/lib/postgresql/data"]
EXPOSE 5432
STOPSIGNAL SIGINT
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["postgres"]
