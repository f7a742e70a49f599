#!/usr/bin/env bash
# marian-examples' transformer recipe (transformer/run-me.sh, Marian v1.12's examples): its
# training command and its decoder command as they are, but for the paths (Multi30k de->en
# instead of WMT en->de BPE: data from examples/multi30k/data, a joint SentencePiece vocabulary
# trained on the first run, this program's binaries, examples/multi30k/validate.sh as the
# validation script). Options given to this script are appended to the training command (e.g.
# --after-batches 100 for a short run; a repeated option takes its last value).
# Usage: examples/multi30k/marian-examples-transformer.sh [TRAINING OPTIONS...]
# Environment: GPUS (default 0; on a CPU-only build device 0 is the CPU), MULTI30K_DATA, MODEL_DIR,
# MARIAN_BIN (the programs' folder, default build/src).
set -euo pipefail
cd "$(dirname "$0")/../.."
MARIAN=${MARIAN_BIN:-build/src}
MARIAN_TRAIN=$MARIAN/marian
MARIAN_DECODER=$MARIAN/marian-decoder
GPUS=${GPUS:-0}
DATA=${MULTI30K_DATA:-examples/multi30k/data}
MODEL=${MODEL_DIR:-examples/multi30k/model-marian-examples}
export MULTI30K_DATA=$DATA
[ -f "$DATA/train.de.gz" ] || scripts/get-multi30k "$DATA"
mkdir -p "$MODEL"

if [ ! -e "$MODEL/model.npz" ]
then
    $MARIAN_TRAIN \
        --model $MODEL/model.npz --type transformer \
        --train-sets $DATA/train.de.gz $DATA/train.en.gz \
        --max-length 100 \
        --vocabs $MODEL/vocab.deen.spm $MODEL/vocab.deen.spm \
        --mini-batch-fit -w 10000 --maxi-batch 1000 \
        --early-stopping 10 --cost-type=ce-mean-words \
        --valid-freq 5000 --save-freq 5000 --disp-freq 500 \
        --valid-metrics ce-mean-words perplexity translation \
        --valid-sets $DATA/val.de.gz $DATA/val.en.gz \
        --valid-script-path "bash ./examples/multi30k/validate.sh" \
        --valid-translation-output $MODEL/valid.output --quiet-translation \
        --valid-mini-batch 64 \
        --beam-size 6 --normalize 0.6 \
        --log $MODEL/train.log --valid-log $MODEL/valid.log \
        --enc-depth 6 --dec-depth 6 \
        --transformer-heads 8 \
        --transformer-postprocess-emb d \
        --transformer-postprocess dan \
        --transformer-dropout 0.1 --label-smoothing 0.1 \
        --learn-rate 0.0003 --lr-warmup 16000 --lr-decay-inv-sqrt 16000 --lr-report \
        --optimizer-params 0.9 0.98 1e-09 --clip-norm 5 \
        --tied-embeddings-all \
        --devices $GPUS --sync-sgd --seed 1111 \
        --exponential-smoothing "$@"
fi

# find best model on dev set
ITER=`cat $MODEL/valid.log | grep translation | sort -rg -k12,12 -t' ' | cut -f8 -d' ' | head -n1`

# translate the test set
zcat $DATA/test_2016_flickr.de.gz \
    | $MARIAN_DECODER -c $MODEL/model.npz.decoder.yml -m $MODEL/model.iter$ITER.npz -d $GPUS -b 12 -n -w 6000 \
    > $MODEL/test_2016_flickr.en.output

# BLEU of the test set (marian-examples runs sacreBLEU)
$MARIAN/marian-evaluate --metric bleu --reference <(zcat $DATA/test_2016_flickr.en.gz) < $MODEL/test_2016_flickr.en.output
