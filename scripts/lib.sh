# Shared shell functions for scripts/*. Source it; do not run it.

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="$REPO/bin"

# Every build and test in scripts/ uses Go's newer encoding/json
# implementation (encoding/json/v2 under the v1 API). It decodes about 1.7x
# faster, which is most of what an MCP client spends on a large run_select
# result (docs/benchmarks.md, "mcpg server"). Code that must match
# encoding/json byte for byte tests against it at run time, so a plain
# `go build` without it behaves the same.
case ",${GOEXPERIMENT:-}," in *,jsonv2,*) ;; *) export GOEXPERIMENT="${GOEXPERIMENT:+$GOEXPERIMENT,}jsonv2" ;; esac

# Tools that must build without cgo (CGO_ENABLED=0).
PURE_TOOLS="tpchgen pgsandbox perfstat perfhtml qprouter"

die() { echo "$(basename "$0"): $*" >&2; exit 1; }
say() { echo "$(basename "$0"): $*" >&2; }

# have_pg_server succeeds when initdb, pg_ctl and postgres are installed
# where pkg/pgtest looks for them.
have_pg_server() {
	local d
	for d in "${PGTEST_BINDIR:-}" "$(pg_config --bindir 2>/dev/null || true)" $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -rn); do
		[ -n "$d" ] && [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && [ -x "$d/postgres" ] && return 0
	done
	return 1
}

# ensure_postgres installs Debian's postgresql package (server and psql)
# when it is missing and we are root; otherwise it names the package.
ensure_postgres() {
	if have_pg_server && command -v psql >/dev/null; then
		return 0
	fi
	if [ "$(id -u)" != 0 ]; then
		die "PostgreSQL server programs or psql are missing; install the Debian package 'postgresql' (sudo apt-get install postgresql) and run again"
	fi
	say "installing Debian package 'postgresql' with apt-get"
	# Do not let the package create and start its own cluster on port 5432.
	mkdir -p /etc/postgresql-common
	if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
		echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.conf
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null || die "apt-get update failed"
	apt-get install -y -qq postgresql postgresql-client >/dev/null || die "apt-get install postgresql failed"
	have_pg_server || die "installed 'postgresql' but still cannot find initdb/pg_ctl/postgres"
}

ensure_go() {
	command -v go >/dev/null || die "Go is not on PATH; install Go 1.26 or newer (https://go.dev/dl/)"
}

# ensure_cc installs Debian's gcc and g++ when they are missing and we are
# root; otherwise it names them. libpg_query and DuckDB are C and C++:
# without a compiler Go builds with cgo off, and those packages fail to
# build ("undefined: pg_query.Parse").
ensure_cc() {
	if command -v gcc >/dev/null && command -v g++ >/dev/null; then
		return 0
	fi
	if [ "$(id -u)" != 0 ]; then
		die "a C and C++ compiler is missing (cgo needs them); install the Debian packages 'gcc' and 'g++' (sudo apt-get install gcc g++) and run again"
	fi
	say "installing Debian packages 'gcc' and 'g++' with apt-get"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null || die "apt-get update failed"
	apt-get install -y -qq gcc g++ >/dev/null || die "apt-get install gcc g++ failed"
}

# go_modules lists the workspace's module directories.
go_modules() {
	(cd "$REPO" && go list -m -f '{{.Dir}}')
}

# build_tool NAME builds tools/NAME into bin/NAME (cached by go build).
build_tool() {
	local name="$1" cgo=1
	case " $PURE_TOOLS " in *" $name "*) cgo=0 ;; esac
	[ "$cgo" = 1 ] && ensure_cc
	# In workspace mode go build stamps no VCS revision unless asked; the
	# benchmark records carry it, so ask when this is a git checkout.
	local vcs=()
	git -C "$REPO" rev-parse --git-dir >/dev/null 2>&1 && vcs=(-buildvcs=true)
	(cd "$REPO/tools/$name" && CGO_ENABLED=$cgo go build "${vcs[@]}" -o "$BIN/$name" .) || die "build of tools/$name failed"
}
