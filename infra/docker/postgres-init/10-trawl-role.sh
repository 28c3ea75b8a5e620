#!/bin/sh
# Run once by the official postgres image when it initialises its data directory
# (/docker-entrypoint-initdb.d): Trawl's role, a password-holding owner of its two databases that is
# no superuser, as the local stack makes it. The password comes from the container's environment.
set -eu
: "${TRAWL_POSTGRES_PASSWORD:?TRAWL_POSTGRES_PASSWORD is not set}"
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres --set=pw="$TRAWL_POSTGRES_PASSWORD" <<'SQL'
SET password_encryption = 'scram-sha-256';
CREATE ROLE trawl LOGIN CREATEDB PASSWORD :'pw';
CREATE DATABASE trawl OWNER trawl;
CREATE DATABASE trawl_registry OWNER trawl;
SQL
