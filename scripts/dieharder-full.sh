#!/usr/bin/env bash
# The full dieharder battery on the live generator's raw output (takes about an hour on 2 cores).
# rgb_minimum_distance (-d 201) is run per dimension (-n 2..5): with its default it fails for
# every generator, /dev/urandom included (a known defect of dieharder 3.31.1).
# Usage: scripts/dieharder-full.sh [REPORT_FILE]
set -euo pipefail
report="${1:-dieharder-report.txt}"
command -v dieharder >/dev/null || { echo "install dieharder (apt-get install dieharder)" >&2; exit 2; }
{
  for id in $(dieharder -l | awk '/^ *-d/ {print $2}'); do
    if [ "$id" = 201 ]; then
      for n in 2 3 4 5; do starfever rng-stream | dieharder -g 200 -d 201 -n "$n" | grep -E '\|' | tail -1; done
    else
      starfever rng-stream | dieharder -g 200 -d "$id" | grep -E '^ *[a-z_0-9]+\|' || true
    fi
  done
} | tee "$report"
echo "failed: $(grep -c FAILED "$report" || true), weak: $(grep -c WEAK "$report" || true)"
