"""scripts/plan-cluster end to end on probe folders written here (compare-configs' configs.txt and
logs, with known words to the target) and a device profile: its predicted times equal the time
model's by hand, the efficiency is one node's time over P times P nodes', the winner is named per
link, a scheme is read from each configuration's options, a configuration probed several times is
its median draw, a missing probe or a listed configuration without a usable log is a clear error,
and plan.png's lines are configuration families."""
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
PLAN = os.path.join(ROOT, "scripts", "plan-cluster")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import time_model as tm  # noqa: E402


def write_probe(folder, name, nodes, options, ces):
    """a run whose every rank displays 1,000 target words per 10 updates and whose rank 0 validates
    after every 10 updates with the cross-entropies `ces`"""
    slug = name.lower().replace(" ", "-")
    os.makedirs(os.path.join(folder, slug), exist_ok=True)
    with open(os.path.join(folder, "configs.txt"), "a") as f:
        f.write(f"{name}|{nodes}|1|{options}\n")
    lines = []
    for k, ce in enumerate(ces, start=1):
        stamp = f"[2026-12-04 10:{k:02d}:00]"
        for rank in range(nodes):
            who = f"[rank {rank}] " if rank else ""
            lines.append(f"{stamp} {who}Ep. 1 : Up. {10 * k} : Sen. {640 * k} : Cost 5.0 : Time 10.00s : "
                         "100.00 words/s : L.r. 1.0000e-04")
        lines.append(f"{stamp} [valid] Ep. 1 : Up. {10 * k} : cross-entropy : {ce} : new best")
    with open(os.path.join(folder, slug, "log.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def load_plan():
    loader = importlib.machinery.SourceFileLoader("plan_cluster", PLAN)
    plan = importlib.util.module_from_spec(importlib.util.spec_from_loader("plan_cluster", loader))
    loader.exec_module(plan)
    return plan


class PlanCluster(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.probes = os.path.join(self.dir, "probes")
        self.profile = os.path.join(self.dir, "device.yml")
        with open(self.profile, "w") as f:
            f.write("name: test device\nparameters: 1000000\nper-mini-batch:\n"
                    "  - {sentences: 32, target-words: 500, seconds-per-update: 0.3}\n"
                    "  - {sentences: 64, target-words: 1000, seconds-per-update: 0.5}\n")

    def plan(self, *extra):
        out = os.path.join(self.dir, "out")
        r = subprocess.run([PLAN, "--probes", self.probes, "--device-profile", self.profile,
                            "--links", "1gbit", "100mbit", "--latency", "50us", "--out", out] + list(extra),
                           capture_output=True, text=True)
        if r.returncode != 0:
            return r, ""
        with open(os.path.join(out, "plan.md")) as f:
            return r, f.read()

    def test_hours_efficiency_and_winner_by_hand(self):
        write_probe(self.probes, "1x1 dense", 1, "", [60, 40])
        write_probe(self.probes, "2x1 dense", 2, "--sync-sgd", [50, 40])
        write_probe(self.probes, "2x1 slow", 2, "--sync-sgd --local-steps 10 --outer-quantize-bits 4", [45, 38])
        r, plan = self.plan()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("validation cross-entropy 40.00", plan)  # the dense probes' worst best
        # one node: 2,000 words at 100 a update, 20 updates of 0.5 s
        self.assertIn("| 1x1 dense | 1 | 2,000 | 20 | 10 s | 10 s |", plan)
        # two nodes: 4,000 words at 200 a update, 20 updates of 0.5 s + the lockstep's agreement (12
        # bytes: the update's counts and signals) + the allreduce of 4 MB
        link = tm.Link(50e-6, 1.25e8)
        per_update = 0.5 + tm.allreduce(2, 12, link) + tm.allreduce(2, 4e6, link)
        self.assertAlmostEqual(per_update, 0.5 + (50e-6 + 12 / 1.25e8) + (50e-6 + 4e6 / 1.25e8))
        efficiency = 10.0 / (2 * 20 * per_update)
        self.assertIn(f"| 2x1 dense | 2 | 4,000 | 20 | {20 * per_update:.3g} s | ", plan)
        row = next(l for l in plan.splitlines() if l.startswith("| 2x1 dense |"))
        self.assertEqual(row.split(" | ")[6], f"{efficiency:.2g}")  # its efficiency at 1gbit
        # local steps reach 40 between their validations: 2,000 + (45-40)/(45-38) of the next 2,000 words each
        words = 2 * (1000 + 5 / 7 * 1000)
        self.assertIn(f"| 2x1 slow | 2 | {words:,.0f} | {words / 200:,.0f} |", plan)
        self.assertIn("| 1gbit | 2x1 slow (2 nodes) |", plan)
        self.assertTrue(os.path.getsize(os.path.join(self.dir, "out", "plan.png")) > 0)

    def test_codec_seconds_add_to_each_update_of_their_scheme(self):
        write_probe(self.probes, "1x1 dense", 1, "", [60, 40])
        write_probe(self.probes, "2x1 dense", 2, "--sync-sgd", [50, 40])
        r, plan = self.plan("--codec-seconds", "dense=0.1")
        self.assertEqual(r.returncode, 0, r.stderr)
        link = tm.Link(50e-6, 1.25e8)
        seconds = 20 * (0.6 + tm.allreduce(2, 12, link) + tm.allreduce(2, 4e6, link))
        self.assertIn(f"| 2x1 dense | 2 | 4,000 | 20 | {seconds:.3g} s |", plan)
        self.assertIn("| 1x1 dense | 1 | 2,000 | 20 | 10 s |", plan)  # one node exchanges nothing
        self.assertIn("dense 0.1 s", plan)
        r, _ = self.plan("--codec-seconds", "fast=1")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("--codec-seconds takes KIND=SECONDS", r.stderr)

    def test_a_probe_with_its_own_mini_batch_computes_at_the_profiles_seconds_for_it(self):
        write_probe(self.probes, "1x1 dense", 1, "", [60, 40])
        write_probe(self.probes, "2x1 dense 32", 2, "--sync-sgd --mini-batch 32", [50, 40])
        r, plan = self.plan()
        self.assertEqual(r.returncode, 0, r.stderr)
        link = tm.Link(50e-6, 1.25e8)
        per_update = 0.3 + tm.allreduce(2, 12, link) + tm.allreduce(2, 4e6, link)  # the profile's 32 sentences
        self.assertIn(f"| 2x1 dense 32 | 2 | 4,000 | 20 | {20 * per_update:.3g} s |", plan)
        self.assertIn("| 1x1 dense | 1 | 2,000 | 20 | 10 s |", plan)  # the default --mini-batch 64: 0.5 s
        self.assertIn("0.5000 s per update of 64 sentences a rank, 0.3000 s of 32,", plan)
        # its words an update are compared with the profile's at 32 sentences: 500 a node
        self.assertIn("Warning: 2x1 dense 32 trained 200 target words an update, the profile's --mini-batch 32 "
                      "gives 1,000 on 2 node(s).", plan)

    def test_a_target_no_probe_reaches_and_no_single_node(self):
        write_probe(self.probes, "2x1 dense", 2, "--sync-sgd", [50, 40])
        r, plan = self.plan("--target", "30")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("| 2x1 dense | 2 | not reached |", plan)
        self.assertIn("| 1gbit | no probe reached 30.00 | - | - |", plan)
        r, plan = self.plan("--target", "45")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("| 1gbit | 2x1 dense (2 nodes) |", plan)
        self.assertIn("- (no 1-node dense probe)", plan)

    def test_probes_unlike_the_profile_are_named(self):
        write_probe(self.probes, "2x2 dense", 2, "--sync-sgd", [50, 40])
        with open(os.path.join(self.probes, "configs.txt"), "w") as f:
            f.write("2x2 dense|2|2|--sync-sgd\n")
        r, plan = self.plan()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("Warning: 2x2 dense ran 2 devices a node; the model counts one.", plan)
        self.assertNotIn("asynchronous", plan)
        write_probe(self.probes, "2x1 ps", 2, "--multi-node --grad-dropping-rate 0.9", [50, 40])
        r, plan = self.plan()
        self.assertIn("Warning: 2x1 ps is asynchronous: its updates depend on the ranks' timing", plan)
        r, plan = self.plan("--mini-batch", "32")  # the profile's 500 words a device, the probe's 100
        self.assertIn("Warning: 2x2 dense trained 200 target words an update, the profile's --mini-batch 32 gives "
                      "1,000 on 2 node(s).", plan)

    def test_a_configuration_probed_in_several_folders_is_its_median_draw(self):
        folders = [os.path.join(self.dir, f"draw{k}") for k in range(3)]
        for folder, ces in zip(folders, ([50, 40], [45, 38], [60, 50])):  # 4,000 words, 3,429, not reached
            write_probe(folder, "2x1 ps", 2, "--multi-node --grad-dropping-rate 0.9", ces)
        out = os.path.join(self.dir, "out")
        r = subprocess.run([PLAN, "--probes"] + folders + ["--device-profile", self.profile, "--target", "40",
                                                           "--links", "1gbit", "--out", out], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("| 2x1 ps | 2 | 4,000 [draws 4,000, 3,429, not reached] | 20 |", r.stdout)
        self.assertEqual(r.stdout.count("| 2x1 ps |"), 1)
        self.assertIn("its words to the target are the median of 3 draws", r.stdout)
        write_probe(os.path.join(self.dir, "draw3"), "2x1 ps", 2, "--multi-node --grad-dropping-rate 0.9", [55, 45])
        r = subprocess.run([PLAN, "--probes", folders[2], folders[0], os.path.join(self.dir, "draw3"),
                            "--device-profile", self.profile,
                            "--target", "40", "--links", "1gbit", "--out", out], capture_output=True, text=True)
        self.assertIn("| 2x1 ps | 2 | not reached [draws not reached, 4,000, not reached] | - |", r.stdout)

    def test_schemes_from_options(self):
        plan = load_plan()
        self.assertEqual(plan.scheme_of("a", "--sync-sgd").kind, "dense")
        ps = plan.scheme_of("b", "--multi-node --grad-dropping-rate 0.99")
        self.assertEqual((ps.kind, ps.dropping), ("ps", 0.99))
        ob = plan.scheme_of("c", "--sync-sgd --onebit-adam --adam-freeze-variance-after 100 --onebit-scale mean-abs")
        self.assertEqual((ob.kind, ob.freeze_after), ("onebit", 100))
        ls = plan.scheme_of("d", "--sync-sgd --local-steps 10 --outer-quantize-bits 4 --outer-fragments 5 --outer-delay 1")
        self.assertEqual((ls.kind, ls.local_steps, ls.bits, ls.fragments, ls.delay), ("local-steps", 10, 4, 5, 1))
        sl = plan.scheme_of("s", "--sync-sgd --local-steps 16 --outer-density 0.01 --outer-quantize-bits 2")
        self.assertEqual((sl.density, sl.bits, sl.sparse()), (0.01, 2, True))
        with self.assertRaises(SystemExit) as pairs:  # the fp32 pairs' sparse sum is not modelled
            plan.scheme_of("p", "--sync-sgd --local-steps 16 --outer-density 0.01")
        self.assertIn("not in the time model", str(pairs.exception))
        for unmodelled in ("--sync-sgd --sparse-allreduce topka --compression-density 0.01", "--sync-sgd --powersgd-rank 4"):
            with self.assertRaises(SystemExit) as refused:  # priced as dense before: refused, named
                plan.scheme_of("u", unmodelled)
            self.assertIn("is not in the time model", str(refused.exception))
        self.assertEqual(plan.scheme_of("b", "--sync-sgd --onebit-adam --onebit-block-size 256").block, 256)
        # 0/1 Adam: dense sums on its variance's steps only: freeze 100, kappa 4: steps 1-4, 6-12 by 2,
        # 16-28 by 4, 36-60 by 8, 76 and 92: 18 of the 100 updates before the freeze
        zo = plan.scheme_of("z", "--sync-sgd --zero-one-adam --adam-freeze-variance-after 100 "
                                 "--adam-variance-update-scaler 4")
        self.assertEqual((zo.kind, zo.freeze_after, zo.kappa), ("onebit", 100, 4))
        self.assertEqual(sum(zo.dense_at(u) for u in range(300)), 18)
        # 1-bit Adam's codec does not read the schedule: dense until the freeze
        ob = plan.scheme_of("o", "--sync-sgd --onebit-adam --adam-freeze-variance-after 100 --adam-variance-update-scaler 4")
        self.assertEqual((ob.kappa, sum(ob.dense_at(u) for u in range(300))), (0, 100))
        # the parameter server's full replies with local gradients (a bare flag: partial; every 10 by
        # default), its push's warm-up
        for options, every in (("--local-gradients", 10), ("--local-gradients sum --local-average-freq 5", 5),
                               ("--local-gradients partial --local-average-freq 0", 0), ("--local-gradients off", 0),
                               ("--local-average-freq 5", 0)):
            ps = plan.scheme_of("l", f"--multi-node --grad-dropping-rate 0.99 {options} --grad-dropping-warmup 1000")
            self.assertEqual((ps.kind, ps.average_freq, ps.warmup), ("ps", every, 1000), options)
        for unmodelled in ("--multi-node --multi-node-overlap", "--multi-node --grad-dropping-rate 0.99 "
                           "--multi-node-local-optimizer"):
            with self.assertRaises(SystemExit) as refused:  # priced as the plain parameter server before
                plan.scheme_of("u", unmodelled)
            self.assertIn("is not in the time model", str(refused.exception))
            self.assertIn(unmodelled.split()[-1], str(refused.exception))
        self.assertEqual(plan.scheme_of("v", "--multi-node --multi-node-overlap=false").kind, "ps")
        # an option whose name starts like another's is not it; the last value counts; NAME=VALUE
        self.assertEqual(plan.scheme_of("e", "--sync-sgd --multi-node-timeout 120").kind, "dense")
        self.assertEqual(plan.scheme_of("f", "--local-steps=10 --sync-sgd").local_steps, 10)
        self.assertEqual(plan.scheme_of("g", "--sync-sgd --local-steps 10 --local-steps 20").local_steps, 20)
        # times in the unit people read them in
        self.assertEqual([plan.duration(x) for x in (0.000123, 59.4, 60, 1234, 3600, 45000)],
                         ["0.000123 s", "59.4 s", "1 min", "20.6 min", "1 h", "12.5 h"])

    def test_a_listed_configuration_without_a_usable_log_is_an_error(self):
        write_probe(self.probes, "1x1 dense", 1, "", [60, 40])
        write_probe(self.probes, "2x1 dense", 2, "--sync-sgd", [50, 40])
        with open(os.path.join(self.probes, "configs.txt"), "a") as f:
            f.write("4x1 dense|4|1|--sync-sgd\n")
        r, _ = self.plan()  # not a table whose winner leaves it out
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(f"plan-cluster: '4x1 dense' in {self.probes}: its log "
                      f"{os.path.join(self.probes, '4x1-dense', 'log.txt')} is missing", r.stderr)
        os.makedirs(os.path.join(self.probes, "4x1-dense"))
        with open(os.path.join(self.probes, "4x1-dense", "log.txt"), "w") as f:
            f.write("[2026-12-04 10:00:00] Training started\n"
                    "[2026-12-04 10:00:01] Error: the transport lost rank 3\n[2026-12-04 10:00:01] Aborted\n")
        r, _ = self.plan()
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("holds no finite validation and no display line: did the run fail? Its last error: "
                      "[2026-12-04 10:00:01] Error: the transport lost rank 3", r.stderr)

    def test_plan_lines_join_a_configuration_family(self):
        # the same options at 1, 2 and 4 nodes: one line; other options at 4 nodes: lines of their own
        plan = load_plan()
        def row(name, nodes, options, devices=1):
            return (dict(name=name, nodes=nodes, devices=devices, options=options), None, None, {})
        rows = [row("4x1 sync dense", 4, "--sync-sgd"), row("4x1 local steps 10", 4, "--sync-sgd --local-steps 10"),
                row("2x1 sync dense", 2, "--sync-sgd"), row("4x1 local steps 20", 4, "--sync-sgd --local-steps 20"),
                row("2x2 sync dense", 2, "--sync-sgd", devices=2), row("1x1 sync dense", 1, "--sync-sgd")]
        self.assertEqual([(label, [r[0]["nodes"] for r in family]) for label, family in plan.families(rows)],
                         [("sync dense", [1, 2, 4]), ("local steps 10", [4]), ("local steps 20", [4]),
                          ("sync dense (2 devices a node)", [2])])

    def test_a_folder_without_probes_is_an_error(self):
        os.makedirs(self.probes)
        r, _ = self.plan()
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("configs.txt is missing", r.stderr)


if __name__ == "__main__":
    unittest.main()
