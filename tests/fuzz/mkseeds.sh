#!/usr/bin/env bash
# tests/fuzz/mkseeds.sh - (re)generate the fuzz targets' seed corpora.
#
# usage: tests/fuzz/mkseeds.sh        (from the repository root)
#
# fuzz_module: small real ELF files compiled here (a shared library with
# and without .symtab, a relocatable object, a static executable with no
# libc) and this machine's vDSO; fuzz_gopclntab: synthetic Go function
# tables (mkseeds_gopclntab.py); fuzz_unwind_elf: those ELF files with a
# sample in one of their functions (mkseeds_unwind_elf.py); fuzz_perf_record and fuzz_unwind:
# synthesized inputs written by mkseeds.c; fuzz_pprof_read: short profiles
# written by pmutop (set PMUTOP to a built binary; skipped otherwise), one
# uncompressed, one rewritten by `go tool pprof -proto`, one cut short. Each seed is kept under 16 KiB
# (libFuzzer's default -max_len follows the largest seed). The results are
# committed; run this by hand when an input layout changes. Inputs a fuzzer
# found are added next to the seeds (named crash-*, leak-*, ...), never
# regenerated.
set -euo pipefail

cd "$(dirname "$0")/../.."
out=tests/fuzz/corpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"/fuzz_module "$out"/fuzz_perf_record "$out"/fuzz_unwind "$out"/fuzz_gopclntab
python3 tests/fuzz/mkseeds_gopclntab.py "$out"/fuzz_gopclntab

cc -std=gnu11 -O1 -g -Wall -Wextra -Werror -D_GNU_SOURCE -Iinclude \
	-o "$tmp/mkseeds" tests/fuzz/mkseeds.c
"$tmp/mkseeds" "$out"

cat >"$tmp/tiny.c" <<'EOS'
static int helper(int x) { return x * 7 + 1; }
int tiny_add(int a, int b) { return helper(a) + b; }
int tiny_mul(int a, int b) { return a * b - helper(b); }
__attribute__((weak)) int tiny_weak(void) { return 3; }
int tiny_data[4] = { 1, 2, 3, 4 };
EOS
cat >"$tmp/start.c" <<'EOS'
void _start(void)
{
	__asm__ volatile("mov $60, %eax\n\txor %edi, %edi\n\tsyscall");
	for (;;)
		;
}
EOS
small=(-Os -Wl,-z,max-page-size=4096 -Wl,-z,noseparate-code -Wl,--build-id -Wl,--hash-style=gnu)
cc -shared -fPIC "${small[@]}" -o "$out/fuzz_module/seed-tiny.so" "$tmp/tiny.c"
cc -shared -fPIC "${small[@]}" -g0 -o "$tmp/s.so" "$tmp/tiny.c"
strip --strip-all -o "$out/fuzz_module/seed-tiny-stripped.so" "$tmp/s.so"
cc -c -fPIC -Os -o "$out/fuzz_module/seed-tiny.o" "$tmp/tiny.c"
cc -static -nostdlib -fno-asynchronous-unwind-tables "${small[@]}" \
	-o "$out/fuzz_module/seed-start" "$tmp/start.c"
cc -static -nostdlib -Os -Wl,-z,max-page-size=4096 -Wl,--build-id -Wl,--eh-frame-hdr \
	-o "$out/fuzz_module/seed-start-ehframe" "$tmp/start.c"

# fuzz_unwind_elf: those ELF files with a sample inside a function of theirs.
python3 tests/fuzz/mkseeds_unwind_elf.py "$out"

if [[ -x ${PMUTOP:-} ]]; then
	p=$out/fuzz_pprof_read
	mkdir -p "$p"
	"$PMUTOP" -q -e task-clock --duration 1 --dump "$p/seed-threads.pb.gz" -- \
		"${WORKLOAD_DIR:-build/workloads}/threads" 2 || true
	"$PMUTOP" -q -e task-clock --duration 1 --dump "$tmp/x.pb.gz" -- \
		"${WORKLOAD_DIR:-build/workloads}/exiter" 2 || true
	gunzip -c "$tmp/x.pb.gz" >"$p/seed-exiter-raw.pb"
	HOME=${HOME:-/tmp} go tool pprof -symbolize=none -proto "$tmp/x.pb.gz" >"$p/seed-go-rewritten.pb.gz"
	head -c 500 "$p/seed-threads.pb.gz" >"$p/seed-truncated-gzip"
fi

for f in "$out"/*/seed-*; do
	if (( $(stat -c %s "$f") > 16384 )); then
		echo "mkseeds: $f is larger than 16 KiB" >&2
		exit 1
	fi
done
ls -l "$out"/*/
