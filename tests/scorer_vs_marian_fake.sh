#!/usr/bin/env bash
# bench/scorer-vs-marian's verdict, with this program in real Marian's place: the same program
# passes every scoring (plain, --normalize, --word-scores, each --summary, --alignment, --n-best)
# and every decoder alignment on both model types, and their ensemble; one whose scores differ (long pairs cropped)
# fails naming the model, the scoring and the first line that differs. Without MARIAN it says so and exits 0; an unknown argument exits 2.
set -euo pipefail
root=$1 ours=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bench=$root/bench/scorer-vs-marian
fail() { echo "scorer-vs-marian: $1"; echo "$out"; exit 1; }

. "$root/tests/marian_bench_checks.sh"
for program in marian-scorer marian-decoder; do
  standin "$work/same" $program ""
  standin "$work/cropped" $program "--max-length 6 --max-length-crop"
done
export OURS=$ours
out=$(MARIAN=$work/same "$bench" --work "$work/w") || fail "the same program failed"
grep -q 'every score agrees' <<< "$out" || fail "no verdict"
[ "$(grep -cE '^(transformer|s2s) +[a-z+ -]+ +[0-9]+ +[0-9.e+-]+ +[0-9.e+-]+ +0$' <<< "$out")" = 34 ] ||
  fail "not 14 scorings and 3 decoder alignments of each model, each without a bad line"
grep -qE '^ensemble +decoder ensemble n-best +[0-9]+ .* 0$' <<< "$out" || fail "no ensemble of the two models"
set +e
out=$(MARIAN=$work/cropped "$bench" --work "$work/w")
status=$?
set -e
[ $status = 1 ] || fail "scores of cropped pairs passed (exit $status)"
grep -qE '^transformer +plain +[0-9]+ .* [1-9][0-9]*$' <<< "$out" || fail "the plain scores not flagged"
grep -q 'first difference: line [0-9]*: Marian "' <<< "$out" || fail "no first difference"
grep -q 'scorer-vs-marian: transformer plain differs' <<< "$out" || fail "no failure verdict"
grep -q 'scorer-vs-marian: transformer decoder alignment hard differs' <<< "$out" ||
  fail "hard alignments of cropped inputs passed as near-ties"
status=0
MARIAN=$work/same "$bench" --model "$work/w/transformer/model.npz" > /dev/null 2>&1 || status=$?
[ $status = 2 ] || fail "--model without --vocabs and --pairs did not exit 2"

expect_skip_and_usage_error "$bench" "$work/none"
echo "scorer-vs-marian: ok"
