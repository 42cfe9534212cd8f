#!/usr/bin/env bash
# fuzz.sh PKG:TARGET...: run each fuzz target for FUZZTIME at FUZZPARALLEL workers,
# with FUZZMINTIME as the budget to minimize each new input (Go's default, a minute per
# input, leaves a fresh machine's workers minimizing instead of fuzzing), then print one
# line per target: its package, elapsed time, executions and new corpus entries. A finding
# lands in the package's testdata/fuzz; the script runs every target and fails at the end
# if any target failed. Logs: FUZZLOG (a directory, default a temporary one).
set -uo pipefail
fuzztime=${FUZZTIME:-2m}
mintime=${FUZZMINTIME:-2s}
parallel=${FUZZPARALLEL:-2}
logdir=${FUZZLOG:-$(mktemp -d)}
mkdir -p "$logdir"
go=${GO:-go}

summary=()
failed=0
for spec in "$@"; do
  pkg=${spec%%:*}
  target=${spec#*:}
  log="$logdir/$target.log"
  echo "fuzz: $target in $pkg for $fuzztime at -parallel $parallel, minimize $mintime (log $log)"
  "$go" test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime "$mintime" \
    -parallel "$parallel" "$pkg" >"$log" 2>&1
  rc=$?
  # The last progress line holds the totals: "fuzz: elapsed: 30m0s, execs: 1233202 (685/sec), new interesting: 12 (total: 140)".
  last=$(grep -E '^fuzz: elapsed: .*execs:' "$log" | tail -n 1)
  elapsed=$(sed -n 's/^fuzz: elapsed: \([^,]*\),.*/\1/p' <<<"$last")
  execs=$(sed -n 's/.*execs: \([0-9]*\) .*/\1/p' <<<"$last")
  news=$(sed -n 's/.*new interesting: \(.*\)$/\1/p' <<<"$last")
  result=ok
  if [ $rc -ne 0 ]; then
    result=FAIL
    failed=1
    tail -n 40 "$log"
  fi
  summary+=("$(printf '%-4s %-34s %-18s elapsed %-8s execs %-10s new interesting %s' "$result" "$target" "$pkg" "${elapsed:-?}" "${execs:-?}" "${news:-?}")")
done

echo
echo "fuzz summary (FUZZTIME=$fuzztime FUZZPARALLEL=$parallel FUZZMINTIME=$mintime, commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)):"
printf '%s\n' "${summary[@]}"
exit $failed
