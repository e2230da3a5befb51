#!/bin/sh
# Make the cluster on the first start (the password from POSTGRES_PASSWORD), then run the server in front.
set -eu
bin=/usr/lib/postgresql/15/bin
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    : "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD for the postgres role}"
    umask 077
    printf '%s\n' "$POSTGRES_PASSWORD" > /tmp/pw
    "$bin/initdb" -D "$PGDATA" -U postgres --pwfile=/tmp/pw --encoding=UTF8 --locale=C.UTF-8 \
        --auth-local=peer --auth-host=scram-sha-256 >/dev/null
    rm -f /tmp/pw
    echo "host all all 0.0.0.0/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
    "$bin/pg_ctl" -D "$PGDATA" -o "-c listen_addresses='' -k /tmp" -w start >/dev/null
    psql -h /tmp -U postgres -q -c "CREATE DATABASE notewell" -c "\\c notewell" -c "CREATE EXTENSION pg_trgm"
    "$bin/pg_ctl" -D "$PGDATA" -w stop >/dev/null
fi
exec "$bin/postgres" -D "$PGDATA" -c listen_addresses='*' -c port="$PGPORT" -k /tmp
