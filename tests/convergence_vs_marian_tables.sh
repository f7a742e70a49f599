#!/usr/bin/env bash
# bench/convergence-vs-marian's arithmetic, without training: its tables (--table-only) over a
# work folder of made-up runs, where one side lacks a seed (the last run missing once ended the
# script before the BLEU lines); Welch's t and the --all-sets table over made-up evaluation lines;
# runs from --stored where --work lacks them; and, without MARIAN, the skip message with exit 0.
set -euo pipefail
root=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bench=$root/bench/convergence-vs-marian

# valid SIDE SEED CE@100 CE@200: Marian's validation log lines (ours writes the same)
valid() {
  mkdir -p "$work/$1-$2"
  printf '[2026-11-27 10:00:00] [valid] Ep. 1 : Up. 100 : ce-mean-words : %s : new best\n' "$3" > "$work/$1-$2/valid.log"
  printf '[2026-11-27 10:00:00] [valid] Ep. 1 : Up. 100 : perplexity : 99 : new best\n' >> "$work/$1-$2/valid.log"
  printf '[2026-11-27 10:01:00] [valid] Ep. 2 : Up. 200 : ce-mean-words : %s : new best\n' "$4" >> "$work/$1-$2/valid.log"
}
valid ours 1111 5.5 4.5
valid ours 2222 5.7 4.3
valid marian 1111 5.0 4.0
echo 38.00 > "$work/ours-1111/bleu"
echo 39.00 > "$work/ours-2222/bleu"
echo 39.50 > "$work/marian-1111/bleu"
echo 20.0 > "$work/ours-1111/bleu.iter100"
echo 37.0 > "$work/ours-1111/bleu.iter200"
echo 38.0 > "$work/ours-2222/bleu.iter200"
echo 21.0 > "$work/marian-1111/bleu.iter100"

out=$(MARIAN= "$bench" --table-only --seeds "1111 2222" --work "$work")
echo "$out"
fail() { echo "FAIL: $1"; exit 1; }
# row FIRST-FIELD PATTERN: the line whose first field is FIRST-FIELD has these fields
row() { awk -v k="$1" '$1 == k' <<< "$out" | grep -E "$2" >/dev/null || fail "row $1 is not /$2/"; }
row 100 '^ +100 +1 +5\.5000 +5\.7000 +5\.0000 +- +5\.6000\(0\.141\) +5\.0000\(-\) +\+0\.6000$'
row 200 '^ +200 +2 +4\.5000 +4\.3000 +4\.0000 +- +4\.4000\(0\.141\) +4\.0000\(-\) +\+0\.4000$'
grep -Eq '^test2016 BLEU ours +38\.00 39\.00 +mean 38\.50 \(sd 0\.71\)$' <<< "$out" || fail "ours' BLEU line"
grep -Eq '^test2016 BLEU marian +39\.50 - +mean 39\.50$' <<< "$out" || fail "Marian's BLEU line"
# the checkpoints' table: update, ours-1111 ours-2222 marian-1111 marian-2222, each side's mean
ckpt=$(echo "$out" | sed -n '/BLEU of the kept checkpoints/,$p')
awk '$1 == 100' <<< "$ckpt" | grep -E '^ +100 +20\.0 +- +21\.0 +- +20\.00 +21\.00 +-1\.00$' >/dev/null || fail "checkpoint row 100"
awk '$1 == 200' <<< "$ckpt" | grep -E '^ +200 +37\.0 +38\.0 +- +- +37\.50 +- +-$' >/dev/null || fail "checkpoint row 200"

# two seeds a side: Welch's t of test2016 BLEU; --all-sets' files: every set's BLEU and ratio
# bleuline DIR FILE BLEU RATIO: marian-evaluate's line
bleuline() {
  mkdir -p "$work/two/$1"
  printf 'BLEU = %s 70.0/45.0/30.0/20.0 (BP = 0.950 ratio = %s hyp_len = 950 ref_len = 1000)\n' "$3" "$4" > "$work/two/$1/$2"
}
for run in ours-1111:38.00 ours-2222:39.00 marian-1111:39.50 marian-2222:40.50; do
  mkdir -p "$work/two/${run%:*}" && echo "${run#*:}" > "$work/two/${run%:*}/bleu"
done
for d in ours-1111 marian-1111; do
  bleuline $d test2016.en.bleu 38.00 0.951
  bleuline $d test_2017_flickr.en.bleu 34.00 0.980
  bleuline $d test_2017_mscoco.en.bleu 26.00 0.990
  bleuline $d test_2018_flickr.en.bleu 31.00 1.010
  bleuline $d 4-test-sets.en.bleu 33.00 0.970
  bleuline $d val.en.bleu 39.00 1.000
  echo 'chrF2 = 58.00' > "$work/two/$d/test2016.en.chrf"
done
echo 1.7270 > "$work/two/ours-1111/test_2016_flickr.ce"
echo 1.7058 > "$work/two/marian-1111/test_2016_flickr.ce"
bleuline marian-1111 test2016.en.bleu 39.50 0.990
bleuline marian-1111 4-test-sets.en.bleu 34.25 1.002
two=$(MARIAN= "$bench" --table-only --seeds "1111 2222" --work "$work/two")
echo "$two"
grep -Eq "^test2016 BLEU ours - marian -1\.50, Welch's t -2\.1$" <<< "$two" || fail "Welch's t line"
sets() { awk -v k="$1" '$1 == k' <<< "$two" | grep -E "$2" >/dev/null || fail "set row $1 is not /$2/"; }
sets test_2016_flickr '^test_2016_flickr +38\.00 +- +39\.50 +- +38\.00 +39\.50 +-1\.50$'
sets 4-test-sets '^4-test-sets +33\.00 +- +34\.25 +- +33\.00 +34\.25 +-1\.25$'
sets ratio:4-test-sets '^ratio:4-test-sets +0\.970 +- +1\.002 +- +0\.970 +1\.002 +-0\.032$'
sets ratio:val '^ratio:val +1\.000 +- +1\.000 +- +1\.000 +1\.000 +\+0\.000$'
sets chrF2:test_2016_flickr '^chrF2:test_2016_flickr +58\.00 +- +58\.00 +- +58\.00 +58\.00 +\+0\.00$'
sets ce:test_2016_flickr '^ce:test_2016_flickr +1\.7270 +- +1\.7058 +- +1\.7270 +1\.7058 +\+0\.0212$'
grep -q "ce:val" <<< "$two" && fail "a ce row without scores"
grep -q "Welch" <<< "$out" && fail "Welch's t with one Marian seed"

# --stored: a run that --work lacks comes from the stored runs; --work's own run wins
(work=$work/stored; valid marian 2222 6.0 3.0; valid ours 1111 9.0 9.0)
mkdir -p "$work/ours-3333" && : > "$work/ours-3333/valid.log"  # a run stopped before its first validation
stored=$(MARIAN= "$bench" --table-only --seeds "3333 1111 2222" --work "$work" --stored "$work/stored")
awk '$1 == 100' <<< "$stored" | grep -E '^ +100 +1 +- +5\.5000 +5\.7000 +- +5\.0000 +6\.0000 ' >/dev/null || fail "a stored run's row 100"

# without MARIAN a run that needs Marian says so and succeeds; a wrong argument is an error
. "$root/tests/marian_bench_checks.sh"
expect_skip_and_usage_error "$bench" "$work/none"
echo "convergence-vs-marian tables: ok"
