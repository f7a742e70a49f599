#!/usr/bin/env bash
# scripts/compare-configs on real launchers: with `--launcher mpirun --hostfile` (a hostfile of
# localhost slots) two configurations of a tiny transformer train for the same target-word
# budget, and the table ranks them by the words each needed to reach the best dense validation
# cross-entropy (dense itself: x 1.000), and --continue trains them on from their checkpoints to
# a larger budget; `--launcher srun` builds one srun command per
# configuration (checked with --dry-run, as there is no SLURM here); --hostfile without mpirun
# is an error; `--launcher in-process` (ranks as threads of one process) gives the validations
# of mpirun's runs; --stop-at ends a run at its first validation at or below a cross-entropy.
set -euo pipefail
root=$1
bin=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
/usr/bin/python3 "$root/scripts/make-synthetic-corpus" "$work/data" --train 2000 > /dev/null
"$bin/marian-vocab" < "$work/data/train.src" > "$work/vocab.src.yml"
"$bin/marian-vocab" < "$work/data/train.trg" > "$work/vocab.trg.yml"
cat > "$work/base.yml" <<YML
type: transformer
train-sets: [$work/data/train.src, $work/data/train.trg]
dim-emb: 32
transformer-dim-ffn: 64
transformer-heads: 2
enc-depth: 1
dec-depth: 1
mini-batch: 16
maxi-batch: 10
learn-rate: 0.003
seed: 7
YML
echo "localhost slots=2" > "$work/hosts"
cat > "$work/configs" <<'CFG'
2x1 sync dense|2|1|--sync-sgd
2x1 sync topka 0.05 local|2|1|--sync-sgd --sparse-allreduce topka --compression-density 0.05 --local-gradients partial --local-average-freq 5
CFG
common=(--configs "$work/configs" --base "$work/base.yml" --vocabs "$work/vocab.src.yml" "$work/vocab.trg.yml"
        --valid "$work/data/valid.src" "$work/data/valid.trg" --valid-lines 100 --marian "$bin/marian")
timeout 600 "$root/scripts/compare-configs" "${common[@]}" --launcher mpirun --hostfile "$work/hosts" \
  --words 12000 --valid-every-words 3000 --extra "" --out "$work/out"
cat "$work/out/table.md"
grep -q "words to target" "$work/out/table.md"
grep -Eq '^\| 2x1 sync dense \|.*\| 1\.000 \|' "$work/out/table.md" || { echo "FAIL: dense is not x 1.000"; exit 1; }
# bytes over the run: rank 0's display lines, each line's sent + received per update times the
# updates since the line before, summed here apart from compare-configs; where the lines say the
# sum is MPI_Allreduce's, "not counted"
/usr/bin/python3 - "$work/out/table.md" "$work/out" <<'PY'
import re, sys
units = {"B": 1, "KB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3}
rows = {l.split("|")[1].strip(): [c.strip() for c in l.split("|")[1:-1]] for l in open(sys.argv[1]) if l.startswith("| 2x1")}
for name, slug in (("2x1 sync dense", "2x1-sync-dense"), ("2x1 sync topka 0.05 local", "2x1-sync-topka-0-05-local")):
    total, last, not_counted = 0.0, 0, False
    for line in open(f"{sys.argv[2]}/{slug}/log.txt"):
        d = re.search(r"^\[[^]]+\] Ep\. \d+ : Up\. (\d+) : .*words/s(.*)$", line)
        if not d:
            continue  # [rank N] lines do not match: rank 0's only
        b = re.search(r"Sent ([0-9.]+)(B|KB|MB|GB)/up : Recv ([0-9.]+)(B|KB|MB|GB)/up", d.group(2))
        if b:
            total += (float(b.group(1)) * units[b.group(2)] + float(b.group(3)) * units[b.group(4)]) * (int(d.group(1)) - last)
        not_counted = not_counted or "Sent not counted" in d.group(2)
        last = int(d.group(1))
    cell = rows[name][6]
    if not_counted:
        assert cell == "not counted", (name, cell)
    else:
        got = float(cell.replace(" KB", "").replace(",", "")) * 1024
        assert total > 0 and abs(got - total) <= 0.001 * total + 1024, (name, got, total)
    print(f"{name}: bytes over the run {cell} (summed here: {total / 1024:,.0f} KB{', not counted' if not_counted else ''})")
PY
for c in 2x1-sync-dense 2x1-sync-topka-0-05-local; do
  [ "$(grep -c '\[valid\]' "$work/out/$c/log.txt")" -ge 3 ] || { echo "FAIL: $c validated fewer than 3 times"; exit 1; }
  grep -q '\[rank 1\]' "$work/out/$c/log.txt" || { echo "FAIL: $c did not run on 2 ranks"; exit 1; }
done
[ "$(grep -c '^2x1 sync' "$work/out/results.csv")" -ge 6 ] || { echo "FAIL: results.csv"; exit 1; }
for f in ce-words.png ce-time.png; do [ -s "$work/out/$f" ] || { echo "FAIL: no $f"; exit 1; }; done
# --launcher in-process: the same configurations as ranks in one process give the same validation
# curve as mpirun's: the cross-entropy at each validation to float rounding (its words only roughly:
# compare-configs reckons them from the display lines' Time x words/s, printed with 2 decimals,
# and these tiny runs display every few hundredths of a second)
timeout 600 "$root/scripts/compare-configs" "${common[@]}" --launcher in-process \
  --words 12000 --valid-every-words 3000 --extra "" --out "$work/in-process" > /dev/null
grep -q '\[rank 1\]' "$work/in-process/2x1-sync-dense/log.txt" || { echo "FAIL: in-process did not run 2 ranks"; exit 1; }
/usr/bin/python3 - "$work/out/results.csv" "$work/in-process/results.csv" <<'PY'
import csv, sys
def curve(path):
    rows = list(csv.DictReader(open(path)))
    return [(r["configuration"], int(r["target_words"]), float(r["valid_cross_entropy"])) for r in rows]
mpirun, inproc = curve(sys.argv[1]), curve(sys.argv[2])
assert len(inproc) >= 6 and len(inproc) == len(mpirun), (len(inproc), len(mpirun))
for (c1, w1, ce1), (c2, w2, ce2) in zip(mpirun, inproc):
    assert c1 == c2 and abs(w1 - w2) <= 0.25 * w1 and abs(ce1 - ce2) <= 1e-4 * ce1, ((c1, w1, ce1), (c2, w2, ce2))
print(f"in-process: the {len(inproc)} validations of mpirun's runs")
PY
# --stop-at CE: a configuration ends at its first validation at or below CE, not at its budget
stop=$(/usr/bin/python3 -c 'import csv, sys
ces = [float(r["valid_cross_entropy"]) for r in csv.DictReader(open(sys.argv[1])) if r["configuration"] == "2x1 sync dense"]
assert ces[1] * 1.0002 < ces[0], ces
print(ces[1] * 1.0002)' "$work/in-process/results.csv")
echo "2x1 sync dense|2|1|--sync-sgd" > "$work/dense-only"
# Its budget holds 80 validations. How many come before the stop depends on compare-configs'
# polling (every 0.5 s) and the machine's load, so only what does not: the stop came (SIGTERM's
# line, before the budget's end), after a validation at or below the target.
timeout 600 "$root/scripts/compare-configs" "${common[@]}" --configs "$work/dense-only" --launcher in-process \
  --words 240000 --valid-every-words 3000 --extra "" --stop-at "$stop" --out "$work/stopped" > /dev/null
stopped_log="$work/stopped/2x1-sync-dense/log.txt"
valids=$(grep -c '\[valid\]' "$stopped_log")
[ "$valids" -ge 2 ] && [ "$valids" -lt 80 ] || { echo "FAIL: --stop-at $stop: $valids validations, not 2-79 of 80"; exit 1; }
awk -v s="$stop" '
  !reached && match($0, /cross-entropy : [0-9.]+/) { if (substr($0, RSTART + 16, RLENGTH - 16) + 0 <= s) reached = NR }
  /Training stops on SIGTERM/ && !stop { stop = NR }
  END { exit !(reached && stop && reached < stop) }' "$stopped_log" \
  || { echo "FAIL: --stop-at $stop: no stop on SIGTERM after a validation at or below it"; exit 1; }
echo "--stop-at: stopped after $valids validations"
# --continue: the same runs trained on from their checkpoints to a larger budget, logs appended
log="$work/out/2x1-sync-dense/log.txt"
before=$(grep -c '\[valid\]' "$log")
first=$(head -1 "$log")
last=$(grep -v '\[rank' "$log" | grep -oE ' : Up\. [0-9]+ : Sen' | tail -1 | grep -oE '[0-9]+')
timeout 600 "$root/scripts/compare-configs" "${common[@]}" --launcher mpirun --hostfile "$work/hosts" \
  --words 18000 --valid-every-words 3000 --extra "" --out "$work/out" --continue > /dev/null
[ "$(grep -c '\[valid\]' "$log")" -gt "$before" ] || { echo "FAIL: --continue validated no more"; exit 1; }
[ "$(head -1 "$log")" = "$first" ] || { echo "FAIL: --continue lost the first run's log"; exit 1; }
[ "$(grep -v '\[rank' "$log" | grep -c " : Up\. $last : Sen")" -eq 1 ] || { echo "FAIL: --continue started again"; exit 1; }
[ "$(grep -v '\[rank' "$log" | grep -oE ' : Up\. [0-9]+ : Sen' | tail -1 | grep -oE '[0-9]+')" -gt "$last" ] \
  || { echo "FAIL: --continue did not train on"; exit 1; }
# srun: the command it builds
out=$("$root/scripts/compare-configs" "${common[@]}" --launcher srun --words 12000 --dry-run --out "$work/srun")
echo "$out"
grep -q "^2x1 sync dense: srun --nodes 2 --ntasks-per-node 1 --kill-on-bad-exit=1 --wait=30 $bin/marian -c $work/base.yml" <<< "$out" \
  || { echo "FAIL: srun command"; exit 1; }
# sync-SGD's ranks count every rank's labels (Marian's meaning): the budget is the job's
grep -q -- "--after 12000t" <<< "$out" || { echo "FAIL: the word budget of the job"; exit 1; }
# the parameter server's asynchronous clients count their own: each rank's share
echo "2x1 PS|2|1|--multi-node" > "$work/configs-ps"
out=$("$root/scripts/compare-configs" "${common[@]}" --configs "$work/configs-ps" --launcher srun --words 12000 --dry-run \
      --out "$work/srun-ps")
grep -q -- "--valid-freq 20000t .*--after 6000t" <<< "$out" || { echo "FAIL: the word budget per rank: $out"; exit 1; }
if "$root/scripts/compare-configs" "${common[@]}" --launcher srun --hostfile "$work/hosts" --dry-run --out "$work/x" 2>/dev/null; then
  echo "FAIL: --hostfile without mpirun was accepted"; exit 1
fi
echo "compare-configs launchers: ok"
