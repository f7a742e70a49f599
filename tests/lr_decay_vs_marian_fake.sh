#!/usr/bin/env bash
# bench/lr-decay-vs-marian's verdict, with this program in real Marian's place: the same program
# passes (a strategy by updates, one by validation stalls whose last decay follows the last update,
# a resume that warms up again); one that decays an update later fails naming the scenario and the
# first rate that differs. Without MARIAN it says so and exits 0; an unknown argument or scenario
# exits 2.
set -euo pipefail
root=$1 ours=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bench=$root/bench/lr-decay-vs-marian
fail() { echo "lr-decay-vs-marian: $1"; echo "$out"; exit 1; }

. "$root/tests/marian_bench_checks.sh"
standin "$work/same" marian ""
standin "$work/later" marian "--lr-decay-start 5"
export OURS=$ours
out=$(MARIAN=$work/same "$bench" --work "$work/w1" batches stalled at-reload) || fail "the same program failed"
grep -q 'every rate and decay agrees' <<< "$out" || fail "no verdict"
[ "$(grep -cE '^(decay|after) +[0-9]+ ' <<< "$out")" = 7 ] || fail "not the 4 + 3 decays of batches and stalled"
grep -q 'Restarting learning rate warmup' "$work/w1/marian-at-reload/train.log" || fail "at-reload did not warm up again"
set +e
out=$(MARIAN=$work/later "$bench" --work "$work/w2" batches)
status=$?
set -e
[ $status = 1 ] || fail "a decay an update later passed (exit $status)"
grep -qE '^update +4 +1\.5000e-03 +3\.0000e-03  <- differs$' <<< "$out" || fail "update 4 not flagged"
grep -q 'lr-decay-vs-marian: batches differs' <<< "$out" || fail "no failure verdict"
status=0
MARIAN=$work/same "$bench" --work "$work/w3" plateau > /dev/null 2>&1 || status=$?
[ $status = 2 ] || fail "an unknown scenario did not exit 2"

expect_skip_and_usage_error "$bench" "$work/none"
echo "lr-decay-vs-marian: ok"
