#!/usr/bin/env bash
# tests/install-deps.sh - make sure the Debian packages pmutop's build and
# tests need are installed.
#
# Quiet when everything is there. Otherwise, as root: apt-get update and
# install what is missing; as another user: print what is missing and the
# command to run, and exit 1 (never sudo behind the user's back).
#
# usage: install-deps.sh [GROUP]
# Without GROUP: what `make` and `make test` need. GROUP names an extra set
# installed only on demand by the target that needs it:
#   build     only what compiling pmutop needs (`make` on a fresh machine)
#   fuzz      clang and its libFuzzer runtime (`make fuzz`)
#   valgrind  valgrind memcheck (`make check-valgrind`)
set -euo pipefail

PKGS=(
	gcc make pkg-config                  # toolchain
	libunwind-dev libelf-dev libdw-dev   # unwinding, ELF/DWARF symbols
	libprotobuf-c-dev protobuf-c-compiler zlib1g-dev  # pprof output
	libncurses-dev                       # live view
	tmux                                 # drives the live view in e2e (t_tui.sh)
	libcmocka-dev                        # unit tests
	libpfm4-dev                          # event names
	libiberty-dev                        # C++/Rust demangler
	libcapstone-dev                      # disassembler (--annotate)
	libmicrohttpd-dev curl               # --http server; its e2e test
	libcurl4-openssl-dev clickhouse-server clickhouse-client  # --push/--load clickhouse://; a real server in t_clickhouse*.sh
	libdebuginfod-dev debuginfod dwz strace  # debug files by build-id; a real server in t_debuginfod.sh
	g++ binutils util-linux              # C++ workload, objcopy, unshare (e2e)
	time man-db libcap2-bin python3      # /usr/bin/time (peak RSS), man -l, capsh, helpers (e2e)
	libc6-dbg                            # libc's own names and lines, as on a developer's machine
	golang-go                            # go tool pprof reads our profiles in e2e tests
	linux-perf                           # perf, to cross-check workloads
	chromium nodejs                      # the flame graph page in a real browser (t_flame_*.sh)
)

case "${1:-}" in
"") ;;
build)    PKGS=(gcc make pkg-config libunwind-dev libelf-dev libdw-dev libprotobuf-c-dev
                protobuf-c-compiler zlib1g-dev libncurses-dev libpfm4-dev libiberty-dev
                libcapstone-dev libmicrohttpd-dev libdebuginfod-dev libcurl4-openssl-dev) ;;
fuzz)     PKGS=(clang libclang-rt-14-dev) ;;
valgrind) PKGS=(valgrind) ;;
*)
	echo "install-deps: unknown group \"$1\" (known: build, fuzz, valgrind)" >&2
	exit 2 ;;
esac

missing=()
for p in "${PKGS[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	if [[ "$status" != "install ok installed" ]]; then
		missing+=("$p")
	fi
done
# Debian's nodejs comes without npm; NodeSource's nodejs package includes it.
if [[ -z ${1:-} ]] && ! command -v npm >/dev/null 2>&1; then
	missing+=(npm)
fi

# npm packages the tests use, each directory pinned by its lock file and
# local to the tree (no root): tests/web has playwright-core, which drives
# Debian's chromium (it downloads no browser); tests/programs has real
# programs the e2e tests profile (esbuild's Linux binary: a stripped Go
# program from a newer Go than Debian's).
npm_deps() {
	local dir mark
	for dir in web:playwright-core programs:@esbuild/linux-x64; do
		mark=${dir#*:}
		dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/${dir%%:*}" && pwd)
		[[ -z ${1:-} && ! -d $dir/node_modules/$mark ]] || continue
		echo "install-deps: npm ci in $dir ($mark)" >&2
		if ! (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2); then
			# esbuild's binary is x86_64 only: its test SKIPs elsewhere.
			[[ $mark == @esbuild/* ]] || return 1
			echo "install-deps: $mark not installed (t_go_esbuild will SKIP)" >&2
		fi
	done
}

if (( ${#missing[@]} == 0 )); then
	npm_deps "${1:-}"
	exit 0
fi

cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if (( EUID != 0 )); then
	# One line: `make` shows it as its error.
	echo "missing Debian packages; as root, run: apt-get update && $cmd" >&2
	exit 1
fi

echo "install-deps: installing ${missing[*]}" >&2
apt-get update
DEBIAN_FRONTEND=noninteractive $cmd
npm_deps "${1:-}"
