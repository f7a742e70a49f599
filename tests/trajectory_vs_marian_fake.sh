#!/usr/bin/env bash
# bench/trajectory-vs-marian's verdict, with this program in real Marian's place: its Costs are
# this program's and the bench passes; at 3x the learning rate the Costs leave at update 3 (update
# 1 has rate 0 on both sides) and the bench exits 1 naming the update. With --dropout the same
# seeds on both sides give a difference of 0 in every block; --resume-at resumes both sides with
# --resume-args. Without MARIAN it says so and exits
# 0; an unknown argument exits 2.
set -euo pipefail
root=$1 ours=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bench=$root/bench/trajectory-vs-marian
fail() { echo "trajectory-vs-marian: $1"; echo "$out"; exit 1; }

. "$root/tests/marian_bench_checks.sh"
standin "$work/same" marian ""
standin "$work/faster" marian "--learn-rate 0.003"
# this program through OURS, the build folder under test, which leaves a mark that it ran
mkdir -p "$work/ours"
printf '#!/usr/bin/env bash\ntouch "%s/ours/ran"\nexec "%s/marian" "$@"\n' "$work" "$ours" > "$work/ours/marian"
chmod +x "$work/ours/marian"
export OURS=$work/ours
# a small transformer on the synthetic corpus, one vocabulary made by the first run
/usr/bin/python3 "$root/scripts/make-synthetic-corpus" "$work/data" --train 2000 > /dev/null
d=$work/data
small="--train-sets $d/train.src $d/train.trg --valid-sets $d/valid.src $d/valid.trg --vocabs $d/joint.yml $d/joint.yml
  --dim-vocabs 0 0 --dim-emb 32 --transformer-dim-ffn 64 --transformer-heads 2 --enc-depth 1 --dec-depth 1"
out=$(MARIAN=$work/same "$bench" --updates 4 --strict 4 --work "$work/w1" --args "$small") || fail "the same program failed"
[ -f "$work/ours/ran" ] || fail "the bench did not run the build folder OURS names"
grep -q 'the first 4 updates agree within 1e-5' <<< "$out" || fail "no verdict"
# (--args of several lines: all of them reach both programs)
grep -q '^dim-emb: 32$' "$work/w1/ours/model.npz.yml" || fail "--args' second line was not passed"
[ "$(grep -cE '^ +[1-4] +[0-9.]+ +[0-9.]+ +0\.00e\+00$' <<< "$out")" = 4 ] || fail "not 4 equal Costs"
# --resume-at: both sides stop after update 2 and resume with --resume-args
out=$(MARIAN=$work/same "$bench" --updates 4 --strict 4 --resume-at 2 --resume-args "--no-optimizer-reload" \
  --work "$work/w5" --args "$small") || fail "the same program failed a resume"
[ "$(grep -cE '^ +[1-4] +[0-9.]+ +[0-9.]+ +0\.00e\+00$' <<< "$out")" = 4 ] || fail "not 4 equal Costs across the resume"
for side in ours marian; do
  grep -q 'skipping optimizer state restoration' "$work/w5/$side/train.log" || fail "$side did not resume with the arguments"
done
set +e
out=$(MARIAN=$work/faster "$bench" --updates 4 --strict 4 --work "$work/w2" --args "$small")
status=$?
set -e
[ $status = 1 ] || fail "a 3x learning rate passed (exit $status)"
grep -qE '^ +2 .* 0\.00e\+00$' <<< "$out" || fail "update 2 differs, though update 1 has rate 0"
grep -qE '^ +3 .*<- over 1e-5$' <<< "$out" || fail "update 3 not flagged"
grep -q 'differ by more than 1e-5 within the first 4 updates' <<< "$out" || fail "no failure verdict"

out=$(MARIAN=$work/same "$bench" --updates 12 --dropout 0.1 --seeds "5 6" --work "$work/w3" --args "$small")
[ "$(grep -cE '^ +(1-10|11-12|1-12) +[0-9.]+ \([0-9.]+\) +[0-9.]+ \([0-9.]+\) +[+-]0\.00000 ' <<< "$out")" = 3 ] ||
  fail "the same seeds on both sides differ"
# the whole run's mean over the seeds: with 12 Costs a run, the mean of every Cost of both runs
want=$(cat "$work"/w3/ours-{5,6}/train.log | grep -o ' : Cost [0-9.]*' | awk '{s += $3; n++} END {printf "%.5f", s / n}')
grep -qE "^ +1-12 +$want " <<< "$out" || fail "the mean over the seeds is not $want"
set +e
MARIAN=$work/same "$bench" --dropout 0.1 --seeds 5 --work "$work/w4" > /dev/null 2>&1
[ $? = 2 ] || fail "--dropout with one seed did not exit 2"
set -e

expect_skip_and_usage_error "$bench" "$work/none"
echo "trajectory-vs-marian: ok"
