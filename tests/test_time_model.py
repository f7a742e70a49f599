"""scripts/time_model.py against alpha-beta costs computed by hand: the ring, recursive doubling and
the ring allgather, the parameter server's exchange, each scheme's bytes and waits, link rates,
and the device profile's interpolation."""
import os
import sys
import tempfile
import math
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import time_model as tm  # noqa: E402

LINK = tm.Link(latency=1e-3, bandwidth=1e8)  # 1 ms, 100 MB/s


class Collectives(unittest.TestCase):
    def test_ring_allreduce(self):
        # 4 nodes, 1 MB: 6 steps of 1 ms + 250 KB at 100 MB/s (2.5 ms)
        self.assertAlmostEqual(tm.ring_allreduce(4, 1e6, LINK), 6 * (1e-3 + 2.5e-3))
        # the same chunks sent to every rank at once: 2 latencies, 3 chunks through the link each phase
        self.assertAlmostEqual(tm.direct_reduce_scatter_allgather(4, 2.5e5, LINK), 2 * (1e-3 + 3 * 2.5e-3))
        self.assertAlmostEqual(tm.ring_allreduce(2, 1e6, LINK), 2 * (1e-3 + 5e-3))

    def test_recursive_doubling(self):
        # whole vector each step: log2(4) = 2 steps, 5 nodes need 3
        self.assertAlmostEqual(tm.recursive_doubling_allreduce(4, 1e6, LINK), 2 * (1e-3 + 1e-2))
        self.assertAlmostEqual(tm.recursive_doubling_allreduce(5, 1e6, LINK), 3 * (1e-3 + 1e-2))

    def test_allreduce_picks_the_cheaper(self):
        # large: the ring (0.021 against 0.022); small: recursive doubling (2 ms against 6 ms)
        self.assertAlmostEqual(tm.allreduce(4, 1e6, LINK), 0.021)
        self.assertAlmostEqual(tm.allreduce(4, 100, LINK), 2 * (1e-3 + 1e-6))

    def test_ring_allgather(self):
        self.assertAlmostEqual(tm.ring_allgather(4, 1e5, LINK), 3 * (1e-3 + 1e-3))

    def test_parameter_server(self):
        # alone on the links: 2 latencies (push, reply), 3/4 of the 1 MB push out, then 3/4 of the
        # 1 MB of replies in
        self.assertAlmostEqual(tm.parameter_server_exchange(4, 1e6, 1e6, LINK), 2e-3 + 0.75 * 2e6 / 1e8)
        # among the other clients: 2 nodes, push and reply 1 s each alone (half of 2 MB at 1 MB/s);
        # a cycle of T = 4 s leaves each message 3/4 of its link, E = 2 (1 / (3/4)) = 8/3, and T =
        # busy + E holds for busy = 4/3; with 0.5 s latencies E = 1 + 8/3 and busy = 1/3
        self.assertAlmostEqual(tm.parameter_server_exchange(2, 2e6, 2e6, tm.Link(0, 1e6), busy=4 / 3), 8 / 3)
        self.assertAlmostEqual(tm.parameter_server_exchange(2, 2e6, 2e6, tm.Link(0.5, 1e6), busy=1 / 3), 11 / 3)
        # the others' traffic apart from this client's: their replies none, their pushes 1 s a cycle;
        # T = 4 s: E = 1 / 1 + 1 / (3/4) = 7/3, busy = 4 - 7/3 = 5/3
        self.assertAlmostEqual(tm.parameter_server_exchange(2, 2e6, 2e6, tm.Link(0, 1e6), busy=5 / 3,
                                                            others=(2e6, 0)), 7 / 3)

    def test_one_node_sends_nothing(self):
        for f in (tm.ring_allreduce, tm.recursive_doubling_allreduce, tm.allreduce, tm.ring_allgather,
                  tm.direct_reduce_scatter_allgather):
            self.assertEqual(f(1, 1e6, LINK), 0.0)
        for s in (tm.Scheme("d", "dense"), tm.Scheme("o", "onebit", freeze_after=10), tm.Scheme("p", "ps", dropping=0.99),
                  tm.Scheme("l", "local-steps", local_steps=10, bits=4)):
            self.assertEqual(s.comm_seconds(1, 1e6, 500, LINK, 0.5), 0.0)
            self.assertEqual(s.sent_bytes(1, 1e6, 500), 0.0)


class Schemes(unittest.TestCase):
    N = 1e6

    def test_dense(self):
        s = tm.Scheme("dense", "dense")
        self.assertAlmostEqual(s.sent_bytes(4, self.N, 0), 2 * 0.75 * 4e6)
        # in lockstep: the update's counts and signals summed by recursive doubling (8 floats, 2
        # steps on 4 nodes)
        stop = 2 * (1e-3 + 32 / 1e8)
        self.assertAlmostEqual(s.comm_seconds(4, self.N, 0, LINK, 0.5), stop + 6 * (1e-3 + 1e-2))

    def test_onebit_is_dense_until_the_freeze(self):
        s = tm.Scheme("1-bit", "onebit", freeze_after=100)
        dense = tm.Scheme("dense", "dense")
        self.assertEqual(s.comm_seconds(4, self.N, 99, LINK, 0.5), dense.comm_seconds(4, self.N, 99, LINK, 0.5))
        self.assertAlmostEqual(s.sent_bytes(4, self.N, 100), 2 * 0.75 * self.N / 8 + 6 * 4)  # and a scale a chunk
        # a 1-bit chunk (31,250 bytes) and its scale to each of 3 ranks at once, twice
        stop = 2 * (1e-3 + 32 / 1e8)
        self.assertAlmostEqual(s.comm_seconds(4, self.N, 100, LINK, 0.5), stop + 2 * (1e-3 + 3 * 31254 / 1e8))
        # --onebit-block-size 250: a scale per 250 values, 1,000 more in a chunk of 250,000
        blocks = tm.Scheme("1-bit", "onebit", freeze_after=0, block=250)
        self.assertAlmostEqual(blocks.sent_bytes(4, self.N, 0), 6 * (31250 + 4 + 4000))

    def test_zero_one_adam_sums_densely_on_the_variance_schedule_only(self):
        # freeze 100, kappa 4: steps (1-based) 1-4, then 4 steps 2 apart (6-12), 4 apart (16-28), 8
        # apart (36-60), 16 apart (76, 92; 108 is past the freeze): 4 + 4 + 4 + 4 + 2 = 18
        dense_steps = [1, 2, 3, 4, 6, 8, 10, 12, 16, 20, 24, 28, 36, 44, 52, 60, 76, 92]
        s = tm.Scheme("0/1 Adam", "onebit", freeze_after=100, kappa=4)
        self.assertEqual([u + 1 for u in range(300) if s.dense_at(u)], dense_steps)
        self.assertEqual(tm.variance_updates_up_to(100, 100, 4), 18)
        # never frozen: 5 groups of 4 to step 124, then 156 and 188 (32 apart) by 200: 22
        self.assertEqual(tm.variance_updates_up_to(200, 0, 4), 22)
        self.assertEqual(tm.variance_updates_up_to(50, 100, 0), 50)  # kappa 0: every step
        self.assertFalse(tm.variance_updates_at(0, 100, 4))
        # 1-bit Adam (kappa 0): every update before the freeze dense
        self.assertEqual(sum(tm.Scheme("1-bit", "onebit", freeze_after=100).dense_at(u) for u in range(300)), 100)
        # 100 updates of 0/1 Adam: 18 at dense's seconds, 82 at the 1-bit exchange's
        dense, onebit = (s.comm_seconds(4, self.N, u, LINK, 0.5) for u in (0, 4))
        self.assertAlmostEqual(dense, tm.Scheme("d", "dense").comm_seconds(4, self.N, 0, LINK, 0.5))
        self.assertAlmostEqual(onebit, tm.Scheme("1-bit", "onebit").comm_seconds(4, self.N, 0, LINK, 0.5))
        self.assertAlmostEqual(tm.seconds_for_updates(s, 4, self.N, 100, LINK, 0.5),
                               100 * 0.5 + 18 * dense + 82 * onebit)

    def test_parameter_server_full_replies_with_local_gradients(self):
        # 2 nodes, 75% dropped, a full reply every 2nd exchange (updates 1, 3, ...); half of each
        # message crosses the link: the push half of 2 MB of pairs (1 s at 1 MB/s) every update, the
        # replies half of 2 MB of pairs (1 s) or of 4 MB of values (2 s)
        s = tm.Scheme("ps", "ps", dropping=0.75, average_freq=2)
        link = tm.Link(0, 1e6)
        self.assertEqual([s.sent_bytes(2, self.N, u) for u in (0, 1)], [1e6, 1e6])  # the push stays sparse
        # alone (a cycle so long that the others' traffic vanishes): 1 + 1 s, then 1 + 2 s
        self.assertAlmostEqual(s.comm_seconds(2, self.N, 0, link, 1e9), 2, places=6)
        self.assertAlmostEqual(s.comm_seconds(2, self.N, 1, link, 1e9), 3, places=6)
        # the others' replies 1.5 s on average (one full in 2), their pushes 1 s; at T = 6 s: update 0
        # E = 1 / (1 - 1.5/6) + 1 / (1 - 1/6) = 38/15 after 52/15 s of compute, update 1 1/(3/4) +
        # 2/(5/6) = 56/15 after 34/15
        self.assertAlmostEqual(s.comm_seconds(2, self.N, 0, link, 52 / 15), 38 / 15)
        self.assertAlmostEqual(s.comm_seconds(2, self.N, 1, link, 34 / 15), 56 / 15)
        never = tm.Scheme("ps", "ps", dropping=0.75)  # no --local-gradients, or --local-average-freq 0
        self.assertAlmostEqual(never.comm_seconds(2, self.N, 1, link, 1e9), 2, places=6)

    def test_parameter_server_push_through_the_dropping_warmup(self):
        # 99% dropped after a warm-up of 4 exchanges: the first push dense (4 MB), then 0.01^(u/4) of
        # the values in pairs: 0.1 at u = 2 (0.8 MB), 0.01 from u = 4 (80 KB); 3/4 of it leaves the node
        s = tm.Scheme("ps", "ps", dropping=0.99, warmup=4)
        self.assertAlmostEqual(s.sent_bytes(4, self.N, 0), 0.75 * 4e6)
        self.assertAlmostEqual(s.sent_bytes(4, self.N, 2), 0.75 * 0.8e6)
        self.assertAlmostEqual(s.sent_bytes(4, self.N, 4), 0.75 * 0.08e6)
        # the replies at the constant 1%: 2 ms + 3 MB and 60 KB at 100 MB/s at update 0
        self.assertAlmostEqual(s.comm_seconds(4, self.N, 0, LINK, 1e9), 2e-3 + 0.03 + 0.0006, places=6)

    def test_parameter_server_with_dropping(self):
        s = tm.Scheme("ps", "ps", dropping=0.99)
        self.assertAlmostEqual(s.sent_bytes(4, self.N, 0), 0.75 * 0.01 * self.N * 8)  # the client's pushes
        # half dropped: push and replies 3/4 of 4 MB at 100 MB/s, 0.03 s each alone; a cycle of 0.15 s
        # leaves each 4/5 of its link: E = 2 ms + 2 (0.03 / (4/5)) = 0.077 s, after 0.073 s of compute
        half = tm.Scheme("ps", "ps", dropping=0.5)
        self.assertAlmostEqual(half.comm_seconds(4, self.N, 0, LINK, 0.073), 0.077)
        tm.assign_codecs(half, {"ps": 0.023})  # its own compute is part of the cycle
        self.assertAlmostEqual(half.comm_seconds(4, self.N, 0, LINK, 0.05), 0.077)
        # nothing dropped: the values themselves (4 bytes each), not pairs
        dense = tm.Scheme("ps", "ps", dropping=0.0)
        self.assertAlmostEqual(dense.sent_bytes(4, self.N, 0), 0.75 * self.N * 4)
        # push and replies 3 MB at 100 MB/s, the others' traffic a vanishing share of a long cycle
        self.assertAlmostEqual(dense.comm_seconds(4, self.N, 0, LINK, 1e9), 0.062, places=6)

    def test_local_steps(self):
        s = tm.Scheme("diloco", "local-steps", local_steps=10, bits=4)
        per_value = 0.5 + 4 / 256
        self.assertAlmostEqual(s.sent_bytes(4, self.N, 0), 2 * 0.75 * self.N * per_value / 10)
        stop = 2 * (1e-3 + 32 / 1e8)
        round_cost = 2 * (1e-3 + 3 * self.N / 4 * per_value / 1e8)  # the compressed mean: to all at once
        # the ranks agree on their counts once a round, not every update
        self.assertAlmostEqual(s.comm_seconds(4, self.N, 0, LINK, 0.5), (stop + round_cost) / 10)
        fp32 = tm.Scheme("diloco", "local-steps", local_steps=10)
        self.assertAlmostEqual(fp32.sent_bytes(4, self.N, 0), 2 * 0.75 * self.N * 4 / 10)
        # fp32 rounds go by the ring allreduce
        self.assertAlmostEqual(fp32.comm_seconds(4, self.N, 0, LINK, 0.5), (stop + 6 * (1e-3 + self.N / 1e8)) / 10)

    def test_sparseloco_allgathers_each_ranks_message(self):
        # 16 local steps, each chunk's top 1% in 2 bits: 14 bits a kept value, two magnitudes a chunk
        # of 4096, every rank's message once around the ring (P-1 steps), not an allreduce
        s = tm.Scheme("sparseloco", "local-steps", local_steps=16, bits=2, density=0.01)
        message = self.N * 0.01 * 14 / 8 + math.ceil(self.N / 4096) * 8
        self.assertAlmostEqual(s.sent_bytes(4, self.N, 0), 3 * message / 16)
        self.assertAlmostEqual(s.sent_bytes(8, self.N, 0), 7 * message / 16)  # grows with P
        stop = 2 * (1e-3 + 32 / 1e8)
        self.assertAlmostEqual(s.comm_seconds(4, self.N, 0, LINK, 0.5), (stop + 3 * (1e-3 + message / 1e8)) / 16)
        one = tm.Scheme("sparseloco", "local-steps", local_steps=16, bits=1, density=0.01)
        self.assertAlmostEqual(one.sent_bytes(4, self.N, 0),
                               3 * (self.N * 0.01 * 13 / 8 + math.ceil(self.N / 4096) * 4) / 16)
        # the exchange sends 2 or 1 bits a kept value: anything else is not modelled, never half a magnitude
        for bits in (0, 4, 8):
            with self.assertRaisesRegex(ValueError, "not in the time model"):
                tm.Scheme("pairs", "local-steps", local_steps=16, bits=bits, density=0.01)
        with self.assertRaisesRegex(ValueError, "density in"):
            tm.Scheme("none", "local-steps", local_steps=16, bits=2, density=0)
        with self.assertRaisesRegex(ValueError, "no scheme kind"):
            tm.Scheme("typo", "onebitt")

    def test_streamed_fragments_hide_behind_the_delay(self):
        # 5 fragments, each exchanged beside 1 update of 0.5 s: a fragment's 6 ms is hidden whole
        s = tm.Scheme("streaming", "local-steps", local_steps=10, bits=4, fragments=5, delay=1)
        # (and the ranks' agreement once a round)
        stop = 2 * (1e-3 + 32 / 1e8)
        self.assertAlmostEqual(s.comm_seconds(4, self.N, 0, LINK, 0.5), stop / 10)
        # with 1 ms of compute a fragment's exchange shows less that millisecond
        per_value = 0.5 + 4 / 256
        fragment = 2 * (1e-3 + 3 * self.N / 5 / 4 * per_value / 1e8)
        self.assertAlmostEqual(s.comm_seconds(4, self.N, 0, LINK, 1e-3), (stop + 5 * (fragment - 1e-3)) / 10)

    def test_seconds_for_updates_counts_the_freeze(self):
        s = tm.Scheme("1-bit", "onebit", freeze_after=2)
        tm.assign_codecs(s, {"onebit": 0.1, "dense": 0.03, "ps": 7})
        each = [tm.update_seconds(s, 4, self.N, u, LINK, 0.5) for u in range(4)]
        # before the freeze a dense sum and its 0.03 s; after it, the codec's 0.1 s and the 1-bit exchange
        self.assertAlmostEqual(each[0], 0.5 + 0.03 + tm.Scheme("d", "dense").comm_seconds(4, self.N, 0, LINK, 0.5))
        self.assertAlmostEqual(each[1], each[0])
        self.assertAlmostEqual(each[2], 0.5 + 0.1 + s.comm_seconds(4, self.N, 2, LINK, 0.5))
        self.assertEqual(tm.update_seconds(s, 1, self.N, 3, LINK, 0.5), 0.5)  # one node: compute alone
        self.assertAlmostEqual(tm.seconds_for_updates(s, 4, self.N, 3.5, LINK, 0.5), sum(each[:3]) + 0.5 * each[3])


class Inputs(unittest.TestCase):
    def test_rates_and_latencies(self):
        self.assertAlmostEqual(tm.parse_rate("100mbit"), 12.5e6)
        self.assertAlmostEqual(tm.parse_rate("1gbit"), 1.25e8)
        self.assertAlmostEqual(tm.parse_rate("25Gbit"), 25e9 / 8)
        self.assertAlmostEqual(tm.parse_seconds("5ms"), 5e-3)
        self.assertAlmostEqual(tm.parse_seconds("20us"), 2e-5)
        with self.assertRaisesRegex(ValueError, "100mbit"):
            tm.parse_rate("fast")

    def test_device_profile_interpolates(self):
        with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as f:
            f.write("name: test\nparameters: 1000\nper-mini-batch:\n"
                    "  - {sentences: 32, target-words: 500, seconds-per-update: 0.2}\n"
                    "  - {sentences: 16, target-words: 250, seconds-per-update: 0.1}\n"
                    "  - {sentences: 64, target-words: 1000, seconds-per-update: 0.3}\n")
        p = tm.DeviceProfile.load(f.name)
        os.unlink(f.name)
        self.assertEqual(p.parameters, 1000)
        self.assertAlmostEqual(p.seconds_per_update(24), 0.15)
        self.assertAlmostEqual(p.words_per_update(48), 750)
        self.assertAlmostEqual(p.seconds_per_update(128), 0.5)  # beyond: the last slope
        self.assertAlmostEqual(p.seconds_per_update(8), 0.1)  # below: the smallest's time

    def test_a_profile_of_one_size_is_an_error(self):
        with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as f:
            f.write("name: test\nparameters: 1000\nper-mini-batch:\n"
                    "  - {sentences: 32, target-words: 500, seconds-per-update: 0.2}\n")
        try:
            with self.assertRaisesRegex(ValueError, "at least 2 sizes"):
                tm.DeviceProfile.load(f.name)
        finally:
            os.unlink(f.name)


if __name__ == "__main__":
    unittest.main()
