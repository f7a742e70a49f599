"""The time model of one update of multi-node training: one device's compute (a device profile)
plus the messages of the communication scheme over an alpha-beta link, less what the scheme
overlaps with compute. Used by scripts/plan-cluster (predicted hours to a quality per scheme and
node count) and checked against scripts/simnet by bench/time-model-vs-simnet.

The network: every node has its own full-duplex link into a switch (what scripts/simnet builds,
and what a cluster's top-of-rack switch gives): a message of b bytes costs latency + b/bandwidth,
a node sends and receives at the same time, and nodes exchanging with different partners do not
slow each other. Costs of the collectives, P nodes, a vector of n bytes:
  ring allreduce            2(P-1) (a + n/(P B))   (reduce-scatter, then allgather)
  recursive doubling        ceil(log2 P) (a + n B^-1)  (the whole vector each step: small n)
  ring allgather            (P-1) (a + m/B), m bytes from each node
  parameter server          2 a + t_push/(1 - t_reply'/T) + t_reply/(1 - t_push'/T), t = (P-1)/P bytes/B,
                            T the cycle (compute and exchange): a client's push and then its replies,
                            each sharing its link with the other (asynchronous) clients' traffic (t',
                            theirs over a cycle)
The schemes' bytes are the project's message formats (training/exchange, comm/ps), checked
against the bytes the transport counted in bench/time-model-vs-simnet; per update where they
change: 1-bit and 0/1 Adam's dense sums before the freeze (0/1 Adam's on its variance schedule's
steps only), the parameter server's push through --grad-dropping-warmup and its dense replies
every --local-average-freq exchanges with --local-gradients. Not modelled (plan-cluster refuses
them): the parameter server's --multi-node-overlap and --multi-node-local-optimizer.
"""
import math
import os
import re
from dataclasses import dataclass, field

FLOAT = 4  # bytes of a value
SPARSE_PAIR = 8  # an index (int32) and a value
QUANT_BLOCK = 256  # values per scale of the outer exchange's 8/4-bit codes
# what ranks in lockstep sum when they agree on what they trained (training/loop/lockstep_agreement.cpp):
# the sentences' and the labels' three 12-bit digits each, any rank's signal, any rank run out of its epoch
AGREEMENT_FLOATS = 8
TOPK_CHUNK, TOPK_OFFSET_BITS = 4096, 12  # SparseLoCo's exchange: values a chunk, bits of an offset in it


@dataclass(frozen=True)
class Link:
    latency: float  # seconds per message (alpha)
    bandwidth: float  # bytes per second, each way (1/beta)

    def cost(self, nbytes):
        """one message of nbytes"""
        return self.latency + nbytes / self.bandwidth


def parse_rate(text):
    """bytes per second of '100mbit', '1gbit', '25gbit', '400mbps' (bits), or a number of bytes/s"""
    m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)\s*(k|m|g)?(bit|bps)?", text.strip().lower())
    if not m:
        raise ValueError(f"a link rate is like 100mbit or 10gbit, not '{text}'")
    value = float(m.group(1)) * {None: 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)]
    if not value > 0:
        raise ValueError(f"a link rate is above 0, not '{text}'")
    return value / 8 if m.group(3) else value


def parse_seconds(text):
    """seconds of '5ms', '20us', '0.001' (seconds)"""
    m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)\s*(s|ms|us)?", text.strip().lower())
    if not m:
        raise ValueError(f"a latency is like 5ms or 20us, not '{text}'")
    return float(m.group(1)) * {None: 1, "s": 1, "ms": 1e-3, "us": 1e-6}[m.group(2)]


def reduce_scatter_allgather(P, chunk, link):
    """each node's vector in P chunks of `chunk` bytes: (P-1) steps of reduce-scatter, each node
    then owning one chunk's sum, and the ring allgather of the sums"""
    return 0.0 if P <= 1 else (P - 1) * link.cost(chunk) + ring_allgather(P, chunk, link)


def direct_reduce_scatter_allgather(P, chunk, link):
    """the same exchange with every chunk sent to its owner at once, then every owner's to all at
    once (comm/allreduce/allreduce.h directExchange): a latency a phase, the P-1 chunks through the
    node's own link"""
    return 0.0 if P <= 1 else 2 * link.cost((P - 1) * chunk)


def ring_allreduce(P, nbytes, link):
    return reduce_scatter_allgather(P, nbytes / P, link)


def recursive_doubling_allreduce(P, nbytes, link):
    return 0.0 if P <= 1 else math.ceil(math.log2(P)) * link.cost(nbytes)


def allreduce(P, nbytes, link):
    """what a tuned library picks: the cheaper of the ring and recursive doubling"""
    return min(ring_allreduce(P, nbytes, link), recursive_doubling_allreduce(P, nbytes, link))


def ring_allgather(P, nbytes_each, link):
    return 0.0 if P <= 1 else (P - 1) * link.cost(nbytes_each)


def parameter_server_exchange(P, pushed, pulled, link, busy=None, others=None):
    """one client's push of `pushed` bytes (all shards together) and the replies of `pulled` bytes:
    (P-1)/P of each crosses its link, the push out and then the replies in. Alone on the links
    (busy None): 2 a + t_push + t_reply. Among the other nodes' clients, asynchronous, computing
    `busy` seconds between their exchanges: each message shares its link with their traffic at
    random phases, as flows share a link (processor sharing): the push with this node's server's
    replies to them (t_reply' of every cycle T), the replies with their pushes to this node's
    server (t_push' of every T), so E = 2 a + t_push / (1 - t_reply' / T) + t_reply / (1 - t_push' / T)
    with T = busy + E; `others`: the bytes (pushed, pulled) of their exchange, on average over
    their cycles (by default this client's: the same messages every update)"""
    if P <= 1:
        return 0.0
    push, reply = ((P - 1) / P * b / link.bandwidth for b in (pushed, pulled))
    their_push, their_reply = ((P - 1) / P * b / link.bandwidth for b in (others or (pushed, pulled)))
    alone = 2 * link.latency + push + reply
    if busy is None or push + reply == 0:
        return alone

    def exchange(cycle):
        return 2 * link.latency + push / (1 - their_reply / cycle) + reply / (1 - their_push / cycle)

    # busy + exchange(T) - T falls as T grows: it is >= 0 at T = busy + alone and <= 0 at the
    # cycle that one step from there gives, so bisect between the two
    low = busy + alone
    high = busy + exchange(low)
    for _ in range(100):
        mid = (low + high) / 2
        low, high = (mid, high) if busy + exchange(mid) > mid else (low, mid)
    return exchange(high)


def variance_updates_up_to(t, freeze_after, kappa):
    """how many of the steps 1..t update Adam's variance: every step until the freeze (0: never
    frozen) with kappa 0; 0/1 Adam's kappa steps 1 apart, then kappa 2 apart, kappa 4 apart, ...
    (a port of src/optimizers/variance_schedule.h updatesUpTo)"""
    last = min(t, freeze_after) if freeze_after > 0 else t
    if kappa == 0:
        return last
    count, start, interval = 0, 0, 1
    while start < last:
        end = start + kappa * interval
        if last < end:
            return count + (last - start) // interval
        count += kappa
        start = end
        interval *= 2
    return count


def variance_updates_at(t, freeze_after, kappa):
    """whether step t (1-based) updates the variance (variance_schedule.h updatesAt)"""
    return t > 0 and variance_updates_up_to(t, freeze_after, kappa) > variance_updates_up_to(t - 1, freeze_after, kappa)


@dataclass
class Scheme:
    """A communication scheme: its seconds of communication at update u (none hidden behind
    backward; a streamed round's fragments behind their --outer-delay updates) and the bytes one
    rank sends at update u."""
    name: str
    kind: str  # dense, onebit, ps, local-steps
    freeze_after: int = 0  # onebit: updates before the 1-bit momentum (with kappa 0 all of them dense sums)
    kappa: int = 0  # onebit: 0/1 Adam's --adam-variance-update-scaler (its dense sums the variance's steps; 0: all)
    dropping: float = 0.0  # ps: the fraction of the gradient and delta not sent
    warmup: int = 0  # ps: --grad-dropping-warmup, exchanges over which the push's kept share falls from 1
    average_freq: int = 0  # ps: with --local-gradients, --local-average-freq: a dense reply every so many (0: none)
    local_steps: int = 1  # local-steps: H
    bits: int = 0  # local-steps: 8, 4, 2, 1 or 0 (fp32); with density < 1, 2 or 1
    density: float = 1.0  # local-steps: each chunk's share sent (SparseLoCo's exchange, an allgather)
    fragments: int = 1  # local-steps: streamed fragments
    delay: int = 0  # local-steps: updates a fragment's exchange overlaps
    block: int = 0  # onebit: --onebit-block-size, values a scale (0: a scale per parameter, not counted)
    codec: float = 0.0  # seconds of compute the scheme adds to an update (compressing, selecting, summing)
    dense_codec: float = 0.0  # onebit: what a dense sum adds to its updates before the freeze (dense's codec)

    def __post_init__(self):
        if self.kind not in ("dense", "onebit", "ps", "local-steps"):
            raise ValueError(f"no scheme kind {self.kind} in the time model")
        if not 0 < self.density <= 1:
            raise ValueError(f"a density in (0, 1], not {self.density}")
        if self.sparse() and self.bits not in (1, 2):
            raise ValueError(f"--outer-density with {self.bits or 'no'} --outer-quantize-bits is not in the time "
                             "model (SparseLoCo's exchange sends 2 or 1 bits a kept value; the fp32 pairs' sparse "
                             "sum is not modelled)")

    def dense_at(self, u):
        """whether update u (from 0) sums the gradients densely: 1-bit Adam before its freeze, 0/1 Adam
        before it on its variance's steps (1-based: u + 1) only, as training/exchange/onebit_codec.cpp"""
        return self.kind == "dense" or (self.kind == "onebit" and u < self.freeze_after and
                                        (self.kappa == 0 or variance_updates_at(u + 1, self.freeze_after, self.kappa)))

    def codec_seconds(self, u):
        """the scheme's own compute at update u (1-bit Adam's dense updates: a dense sum's)"""
        return self.dense_codec if self.kind == "onebit" and self.dense_at(u) else self.codec

    def _chunk(self, P, N, u):
        """bytes of one chunk of the reduce-scatter and allgather the sync schemes send (a local-steps
        round's, one fragment's)"""
        if self.dense_at(u):
            return N * FLOAT / P
        if self.kind == "onebit":  # sign bits and a scale per block (the parameters' own: a few hundred bytes)
            return N / P / 8 + FLOAT * (1 + (N / P / self.block if self.block else 0))
        if self.kind == "local-steps":  # 8/4/2/1-bit codes with a scale per 256, or fp32
            per_value = self.bits / 8 + FLOAT / QUANT_BLOCK if self.bits else FLOAT
            return N / self.fragments / P * per_value
        raise ValueError(f"no chunks in scheme kind {self.kind}")

    @staticmethod
    def _ps_message(N, keep):
        """bytes of a client's push to all shards, or of their replies, that keep a share `keep` of
        the values: (index, value) pairs, or the values themselves when all are kept (comm/ps/message.h)"""
        return N * FLOAT if keep >= 1 else keep * N * SPARSE_PAIR

    def _ps_keep_at(self, u):
        """the share of the values exchange u (from 0: one a update) pushes: keep^(u/W) during the
        warm-up, keep = 1 - dropping after it (comm/compression.h keepAt)"""
        keep = 1 - self.dropping
        return keep if keep >= 1 or u >= self.warmup else keep ** (u / self.warmup)

    def _ps_pushed(self, N, u):
        return self._ps_message(N, self._ps_keep_at(u))

    def _ps_full_reply(self, u):
        """whether exchange u's replies are the shards' parameters (comm/ps/shard_client.cpp: every
        --local-average-freq exchanges with --local-gradients)"""
        return self.average_freq > 0 and (u + 1) % self.average_freq == 0

    def _ps_pulled(self, N, u):
        """bytes of exchange u's replies: the delta at the constant keep, or the parameters"""
        return self._ps_message(N, 1.0 if self._ps_full_reply(u) else 1 - self.dropping)

    def sparse(self):
        """SparseLoCo's exchange (comm/allreduce/chunk_topk_mean.h): every rank's message all-gathered"""
        return self.kind == "local-steps" and self.density < 1

    def _topk_message(self, N):
        """bytes of one rank's message of a fragment: offsets and codes of the kept values, and
        2^(bits-1) magnitudes a chunk (chunks taken whole, parameters' edges not counted)"""
        n = N / self.fragments
        return n * self.density * (TOPK_OFFSET_BITS + self.bits) / 8 + \
            math.ceil(n / TOPK_CHUNK) * FLOAT * 2 ** (self.bits - 1)

    def sent_bytes(self, P, N, u):
        """bytes one rank's training sends at update u (N parameters), as its display line counts
        them (the parameter server: its client's pushes; its server's replies go as well)"""
        if P <= 1:
            return 0.0
        if self.kind == "ps":
            return (P - 1) / P * self._ps_pushed(N, u)
        per_exchange = (P - 1) * self._topk_message(N) if self.sparse() else 2 * (P - 1) * self._chunk(P, N, u)
        if self.kind == "local-steps":  # every fragment once a round, spread over its updates
            return self.fragments * per_exchange / self.local_steps
        return per_exchange

    def comm_seconds(self, P, N, u, link, compute):
        """seconds update u waits on the network, after `compute` seconds of its own computing"""
        if P <= 1:
            return 0.0
        if self.kind == "ps":  # its clients asynchronous: the others' exchanges share its links
            pushed, pulled = self._ps_pushed(N, u), self._ps_pulled(N, u)
            # theirs: as far through the warm-up as this client, one full reply in `freq` at any phase
            freq = self.average_freq
            their_pulled = pulled if freq <= 0 else \
                (self._ps_message(N, 1.0) + (freq - 1) * self._ps_message(N, 1 - self.dropping)) / freq
            return parameter_server_exchange(P, pushed, pulled, link, busy=compute + self.codec_seconds(u),
                                             others=(pushed, their_pulled))
        # ranks in lockstep agree on what they trained before every update, with local steps once a round
        agreement = allreduce(P, AGREEMENT_FLOATS * FLOAT, link)
        if self.dense_at(u):
            return agreement + allreduce(P, N * FLOAT, link)
        if self.sparse():
            exchange = ring_allgather(P, self._topk_message(N), link)
        elif self.kind == "onebit" or (self.kind == "local-steps" and self.bits):  # compressed means
            exchange = direct_reduce_scatter_allgather(P, self._chunk(P, N, u), link)
        else:  # fp32 rounds: the ring allreduce
            exchange = reduce_scatter_allgather(P, self._chunk(P, N, u), link)
        if self.kind == "onebit":
            return agreement + exchange
        # local steps: a delayed fragment's exchange runs beside `delay` updates of compute
        exposed = max(0.0, exchange - self.delay * compute)
        return (agreement + self.fragments * exposed) / self.local_steps


def assign_codecs(scheme, by_kind):
    """the scheme's own compute from seconds per scheme kind (dense, onebit, ps, local-steps; 0 where
    not given); 1-bit Adam's dense updates cost what dense sync-SGD's do"""
    scheme.codec = by_kind.get(scheme.kind, 0.0)
    scheme.dense_codec = by_kind.get("dense", 0.0)


def update_seconds(scheme, P, N, u, link, compute):
    """one update at P nodes: the device's compute, the scheme's own, the wait on the network"""
    if P <= 1:
        return compute
    return compute + scheme.codec_seconds(u) + scheme.comm_seconds(P, N, u, link, compute)


def seconds_for_updates(scheme, P, N, updates, link, compute):
    """the seconds of updates [0, updates) (a fraction of the last counts its share)"""
    whole = int(updates)
    total = sum(update_seconds(scheme, P, N, u, link, compute) for u in range(whole))
    return total + (updates - whole) * update_seconds(scheme, P, N, whole, link, compute)


@dataclass
class DeviceProfile:
    """seconds per update of one device at several mini-batch sizes (bench/device-profile)"""
    name: str
    parameters: int
    rows: list = field(default_factory=list)  # (sentences, target words, seconds per update)

    @staticmethod
    def load(path):
        """the profile bench/device-profile writes; a file that is not one is a ValueError naming why"""
        import yaml
        if not os.path.isfile(path):
            raise ValueError(f"{path} is not a file")
        try:
            with open(path) as f:
                y = yaml.safe_load(f)
        except yaml.YAMLError as e:
            raise ValueError(f"{path} is not YAML: {str(e).splitlines()[0]}")
        def positive(value, what):
            if value is None:
                raise ValueError(f"{path}: {what} is missing")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"{path}: {what} is {value!r}, not a number above 0")
            return value
        if not isinstance(y, dict):
            raise ValueError(f"{path} is not a device profile (a mapping with parameters and per-mini-batch rows)")
        rows = []
        for r in y.get("per-mini-batch") or []:
            if not isinstance(r, dict):
                raise ValueError(f"{path}: a per-mini-batch row is {r!r}, not sentences, target-words and "
                                 "seconds-per-update")
            rows.append(tuple(positive(r.get(k), f"a per-mini-batch row's {k}")
                              for k in ("sentences", "target-words", "seconds-per-update")))
        rows.sort()
        if len({r[0] for r in rows}) < 2:
            raise ValueError(f"{path}: a device profile needs per-mini-batch rows of at least 2 sizes "
                             "(bench/device-profile writes 5)")
        return DeviceProfile(y.get("name", path), int(positive(y.get("parameters"), "parameters")), rows)

    def _at(self, sentences, column):
        rows = self.rows
        if sentences <= rows[0][0]:
            return rows[0][column] * (sentences / rows[0][0] if column == 1 else 1)
        for (s0, *a), (s1, *b) in zip(rows, rows[1:]):
            if sentences <= s1:
                f = (sentences - s0) / (s1 - s0)
                return a[column - 1] + f * (b[column - 1] - a[column - 1])
        s0, s1 = rows[-2][0], rows[-1][0]  # beyond the largest: the last step's slope
        slope = (rows[-1][column] - rows[-2][column]) / (s1 - s0)
        return rows[-1][column] + slope * (sentences - s1)

    def seconds_per_update(self, sentences):
        return self._at(sentences, 2)

    def words_per_update(self, sentences):
        return self._at(sentences, 1)
