#!/usr/bin/env bash
# install-deps.sh installs what dbtrail's real-server tests and demo need:
# MariaDB server and client, mydumper, sysbench, Python's pymysql (the
# SQL port's third driver in the tests) and chromium (the console's browser
# tests drive it headless), from Debian's packages;
# and versitygw (an S3 server for the object storage tests), built from its
# Go module.
#
# Contract:
#   - Idempotent. When mariadbd, mariadb, mariadb-install-db, mydumper,
#     sysbench and chromium are all present and Debian's /usr/bin/python3
#     imports pymysql,
#     no package is touched (no apt-get update);
#     when versitygw of the pinned version is installed it is not built
#     again. With everything present it exits 0 quickly.
#   - Otherwise it runs `apt-get update` once and installs the packages
#     non-interactively, using sudo only when not already root.
#   - The Debian mariadb-server package normally starts a system server on
#     port 3306. dbtrail never uses it, so the install runs under a
#     policy-rc.d that forbids service starts, and a system service that the
#     install enabled is stopped and disabled afterwards.
#   - versitygw is built with `go install` into $(go env GOBIN), or the bin
#     folder of $(go env GOPATH), from the Go module proxy. A binary built
#     that way reports no version of its own (--version says "git"), so the
#     version is read from its build information (`go version -m`).
set -euo pipefail

PACKAGES=(mariadb-server mariadb-client mydumper sysbench python3-pymysql chromium)
VERSITYGW_MODULE=github.com/versity/versitygw
VERSITYGW_VERSION=v1.8.0

# go_bin_dir prints the folder `go install` writes to.
go_bin_dir() {
	local gobin gopath
	gobin=$(go env GOBIN)
	if [ -n "$gobin" ]; then
		echo "$gobin"
		return
	fi
	gopath=$(go env GOPATH)
	echo "${gopath%%:*}/bin"
}

# install_versitygw builds versitygw unless the pinned version is there.
install_versitygw() {
	if ! command -v go >/dev/null 2>&1; then
		echo "install-deps: go not found; it is needed to install versitygw" >&2
		exit 1
	fi
	local bin
	bin="$(go_bin_dir)/versitygw"
	if [ -x "$bin" ] && go version -m "$bin" 2>/dev/null |
		awk -v m="$VERSITYGW_MODULE" -v v="$VERSITYGW_VERSION" '$1 == "mod" && $2 == m && $3 == v { found = 1 } END { exit !found }'; then
		return
	fi
	echo "install-deps: installing versitygw $VERSITYGW_VERSION into $(go_bin_dir)" >&2
	(cd / && go install "$VERSITYGW_MODULE/cmd/versitygw@$VERSITYGW_VERSION")
	if ! [ -x "$bin" ]; then
		echo "install-deps: versitygw still missing at $bin after go install" >&2
		exit 1
	fi
}

install_versitygw

have() {
	# mariadbd lives in /usr/sbin, which is not on every user's PATH.
	command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/usr/bin/$1" ]
}

# have_pymysql reports whether Debian's python3 imports pymysql (the
# package installs it for /usr/bin/python3, not for a pyenv or venv python).
have_pymysql() {
	[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import pymysql' >/dev/null 2>&1
}

missing=()
for tool in mariadbd mariadb mariadb-install-db mydumper sysbench chromium; do
	have "$tool" || missing+=("$tool")
done
have_pymysql || missing+=(python3-pymysql)
if [ "${#missing[@]}" -eq 0 ]; then
	exit 0
fi
echo "install-deps: missing ${missing[*]}; installing ${PACKAGES[*]}" >&2

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "install-deps: not root and sudo is not available; install ${PACKAGES[*]} by hand" >&2
		exit 1
	fi
	SUDO=(sudo)
fi

if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-deps: apt-get not found; install ${PACKAGES[*]} by hand" >&2
	exit 1
fi

# Forbid service starts while the packages install, unless the machine
# already has its own policy (containers usually do).
POLICY=/usr/sbin/policy-rc.d
own_policy=0
if [ ! -e "$POLICY" ]; then
	printf '#!/bin/sh\nexit 101\n' | "${SUDO[@]}" tee "$POLICY" >/dev/null
	"${SUDO[@]}" chmod 0755 "$POLICY"
	own_policy=1
fi
cleanup() {
	if [ "$own_policy" -eq 1 ]; then
		"${SUDO[@]}" rm -f "$POLICY"
	fi
}
trap cleanup EXIT

had_server=0
if dpkg-query -W -f='${Status}' mariadb-server 2>/dev/null | grep -q 'install ok installed'; then
	had_server=1
fi

"${SUDO[@]}" apt-get update
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "${PACKAGES[@]}"

# If this run installed mariadb-server, make sure the system server it may
# have started (a machine policy could allow it) is neither running now nor,
# under systemd, started at boot.
if [ "$had_server" -eq 0 ]; then
	if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
		"${SUDO[@]}" systemctl disable --now mariadb.service >/dev/null 2>&1 || true
	elif [ -x /etc/init.d/mariadb ]; then
		"${SUDO[@]}" /etc/init.d/mariadb stop >/dev/null 2>&1 || true
	fi
fi

for tool in mariadbd mariadb mariadb-install-db mydumper sysbench chromium; do
	if ! have "$tool"; then
		echo "install-deps: $tool still missing after install" >&2
		exit 1
	fi
done
if ! have_pymysql; then
	echo "install-deps: /usr/bin/python3 still cannot import pymysql after install" >&2
	exit 1
fi
echo "install-deps: done" >&2
