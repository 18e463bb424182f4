#!/bin/bash
# Run latop's tests and print a TAP-style tally ending in "N passed, N failed".
#   tests/run.sh            unit, golden, live (root), tui, vm (when enabled)
#   tests/run.sh unit live  only those groups
# Every test is a program printing TAP lines (ok / not ok / ok # SKIP reason).
# A program that exits non-zero without a "not ok" line counts as one failure.
set -u
cd "$(dirname "$0")/.."
export LATOP_TOP=$PWD
export LATOP_BIN=${LATOP_BIN:-$PWD/.output/san/latop}
export LATOP_HELPERS=$PWD/.output/helpers
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

groups=("$@")
[ ${#groups[@]} -eq 0 ] && groups=(unit live tui vm)

passed=0 failed=0 skipped=0
failures=()

run_one() {
	local name=$1; shift
	local out rc np nf ns limit=${TEST_TIMEOUT:-300}
	# A VM test may first install qemu and a kernel (minutes on a new machine).
	case $name in vm/*) limit=${VM_TEST_TIMEOUT:-1200} ;; esac
	echo "# $name"
	out=$(timeout "$limit" "$@" 2>&1)
	rc=$?
	printf '%s\n' "$out" | sed 's/^/  /'
	np=$(printf '%s\n' "$out" | grep -cE '^ok [0-9]+' )
	ns=$(printf '%s\n' "$out" | grep -cE '^ok [0-9]+.*# SKIP')
	nf=$(printf '%s\n' "$out" | grep -cE '^not ok [0-9]+')
	np=$((np - ns))
	if [ "$rc" -ne 0 ] && [ "$nf" -eq 0 ]; then
		nf=1
		[ "$rc" -eq 124 ] && echo "  not ok - $name ran out of time ($limit s)" ||
			echo "  not ok - $name exited with status $rc"
	fi
	passed=$((passed + np)); failed=$((failed + nf)); skipped=$((skipped + ns))
	[ "$nf" -gt 0 ] && failures+=("$name")
	return 0
}

for g in "${groups[@]}"; do
	case $g in
	unit)
		for t in .output/tests/*; do
			[ -x "$t" ] && run_one "unit/$(basename "$t")" "$t"
		done ;;
	live|tui|vm)
		for t in tests/$g/*.sh; do
			[ -e "$t" ] || continue
			run_one "$g/$(basename "$t" .sh)" bash "$t"
		done ;;
	*) echo "run.sh: unknown test group '$g' (unit, live, tui, vm)" >&2; exit 2 ;;
	esac
done

echo
[ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
