#!/usr/bin/env bash
# scripts/simnet for real: 2 namespaced nodes at 100 Mbit/s run marian-commbench's ring; the
# result must be right, the time at least 90% of the wire-time bound (the shaping is real: the
# loopback alone would be ~100x faster), and nothing may be left behind.
# Exit 77 (ctest: skipped) where network namespaces cannot be made (an unprivileged container).
set -euo pipefail
root=$1
bin=$2
. "$(dirname "$0")/skip_without_netns.sh"
before=$(ip netns list | grep -c '^simnet' || true)
line=$("$root/scripts/simnet" --nodes 2 --rate 100mbit -- "$bin/marian-commbench" --algo ring --size 1000000 \
  --density 1 --reps 3 | grep '^{')
echo "$line"
after=$(ip netns list | grep -c '^simnet' || true)
[ "$after" = "$before" ] || { echo "FAIL: simnet left namespaces behind"; exit 1; }
/usr/bin/python3 - "$line" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
assert r["correct"], "wrong result"
bound = max(r["bytes_sent"], r["bytes_recv"]) / (100e6 / 8)
print(f"median {r['median_s']:.3f} s, wire-time bound {bound:.3f} s")
assert r["median_s"] >= 0.9 * bound, "faster than the link allows: the shaping is not in effect"
PY
