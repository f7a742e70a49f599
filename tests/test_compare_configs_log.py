"""scripts/compare-configs' reading of a run's log: rank 0's bytes from its display lines, where
some or all of the sums were MPI_Allreduce's (whose bytes the lines do not count), the words at
validations before the ranks' first display lines, the pause before a continued run, validations
printed as %g; its runner's grace for a stopped run, and the per-rank budget, by hand."""
import contextlib
import importlib.machinery
import importlib.util
import io
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
COMPARE = os.path.join(ROOT, "scripts", "compare-configs")
_loader = importlib.machinery.SourceFileLoader("compare_configs", os.path.join(ROOT, "scripts", "compare-configs"))
compare = importlib.util.module_from_spec(importlib.util.spec_from_loader("compare_configs", _loader))
_loader.exec_module(compare)
CONTINUED = compare.CONTINUED  # run_until's marker


def display(update, traffic):
    """a display line of rank 0 ending in `traffic`"""
    return (f"[2026-12-07 10:00:{update:02d}] Ep. 1 : Up. {update} : Sen. {64 * update} : Cost 5.0 : Time 1.00s : "
            f"100.00 words/s : L.r. 1.0000e-04{traffic}")


class TrafficFromTheDisplayLines(unittest.TestCase):
    def traffic(self, *lines):
        with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
            f.write("\n".join(lines) + "\n")
        self.addCleanup(os.remove, f.name)
        return compare.parse_log(f.name)[3]

    def test_every_update_counted(self):
        t = self.traffic(display(5, " : Sent 10.00KB/up : Recv 20.00KB/up"),
                         display(10, " : Sent 1.00KB/up : Recv 2.00KB/up"))
        self.assertEqual(t, (16.5 * 1024, 165 * 1024, 0, 10))  # 150 KB and 15 KB over 10 updates
        self.assertEqual(compare.traffic_cells(t), "16.5 KB | 165 KB")

    def test_updates_summed_by_mpi_are_named_and_left_out_of_the_mean(self):
        # 1-bit Adam under --sparse-allreduce dense: dense updates by MPI_Allreduce, then its own
        t = self.traffic(display(5, " : Sent not counted (MPI_Allreduce) : Recv not counted"),
                         display(10, " : Sent 2.00KB/up : Recv 2.00KB/up (MPI_Allreduce's not counted in 3 of 5 updates)"),
                         display(15, " : Sent 4.00KB/up : Recv 4.00KB/up"))
        self.assertEqual(t, (60 * 1024 / 7, 60 * 1024, 8, 15))  # 20 KB + 40 KB over the 7 counted updates
        self.assertEqual(compare.traffic_cells(t), "8.6 KB | 60 KB (MPI_Allreduce's not counted in 8 of 15 updates)")

    def test_every_update_summed_by_mpi(self):
        t = self.traffic(display(5, " : Sent not counted (MPI_Allreduce) : Recv not counted"),
                         display(10, " : Sent not counted (MPI_Allreduce) : Recv not counted"))
        self.assertIsNone(t)
        self.assertEqual(compare.traffic_cells(t), "not counted (MPI_Allreduce) | not counted")


def write_log(*lines):
    """a log file of `lines`, removed after the test by the caller's cleanup"""
    f = tempfile.NamedTemporaryFile("w", suffix=".log", delete=False)
    f.write("\n".join(lines) + "\n")
    f.close()
    return f.name


class CurveFromTheLog(unittest.TestCase):
    def parse(self, *lines):
        path = write_log(*lines)
        self.addCleanup(os.remove, path)
        return compare.parse_log(path)

    def test_validations_before_the_first_display_lines_count_every_ranks_words(self):
        # --disp-freq 10, validations at updates 3 and 5: rank 0 then trains 100 words an update
        # (10 s at 100 words/s over its first 10 updates), rank 1 50 (10 s at 50 words/s): 3 x 150
        # and 5 x 150 words; the validation at 12 after both lines: 1,500 + 2 x 150
        points, words, updates, _, _ = self.parse(
            "[2026-12-07 10:00:03] [valid] Ep. 1 : Up. 3 : cross-entropy : 150 : new best",
            "[2026-12-07 10:00:05] [valid] Ep. 1 : Up. 5 : cross-entropy : 140 : new best",
            "[2026-12-07 10:00:10] Ep. 1 : Up. 10 : Sen. 640 : Cost 5.0 : Time 10.00s : 100.00 words/s",
            "[2026-12-07 10:00:10] [rank 1] Ep. 1 : Up. 10 : Sen. 640 : Cost 5.0 : Time 10.00s : 50.00 words/s",
            "[2026-12-07 10:00:12] [valid] Ep. 1 : Up. 12 : cross-entropy : 130 : new best")
        self.assertEqual(points, [(0, 450, 150), (2, 750, 140), (9, 1800, 130)])
        self.assertEqual((words, updates), (1500, 20))

    def test_a_rank_yet_to_display_counts_its_updates_so_far(self):
        # rank 0's line at 10 comes before rank 1's: the validation at 12 counts rank 0's 1,000 + 2 x
        # 100 and rank 1's 12 updates at its first interval's 50 words
        points, _, _, _, _ = self.parse(
            "[2026-12-07 10:00:10] Ep. 1 : Up. 10 : Sen. 640 : Cost 5.0 : Time 10.00s : 100.00 words/s",
            "[2026-12-07 10:00:12] [valid] Ep. 1 : Up. 12 : cross-entropy : 130 : new best",
            "[2026-12-07 10:00:13] [rank 1] Ep. 1 : Up. 10 : Sen. 640 : Cost 5.0 : Time 10.00s : 50.00 words/s")
        self.assertEqual(points, [(2, 1200 + 600, 130)])

    def test_a_rank_ahead_of_rank_0_adds_no_updates_it_displayed(self):
        # asynchronous ranks: rank 1 displays its update 10 (500 words) before rank 0 validates at
        # its update 5; rank 0 then displays 1,000 words over 10 updates: 500 + 5 x 100, not 500 +
        # 5 x 50 for rank 1 again
        points, _, _, _, _ = self.parse(
            "[2026-12-07 10:00:04] [rank 1] Ep. 1 : Up. 10 : Sen. 640 : Cost 5.0 : Time 10.00s : 50.00 words/s",
            "[2026-12-07 10:00:05] [valid] Ep. 1 : Up. 5 : cross-entropy : 140 : new best",
            "[2026-12-07 10:00:10] Ep. 1 : Up. 10 : Sen. 640 : Cost 5.0 : Time 10.00s : 100.00 words/s")
        self.assertEqual(points, [(1, 500 + 500, 140)])

    def test_the_pause_before_a_continued_run_is_not_training_time(self):
        # 100 s of the first run, 3 hours idle, 50 s of the continued one: 150 s, and the validation
        # after the pause 100 + 20 s in
        points, words, _, _, seconds = self.parse(
            "[2026-12-07 10:00:00] Ep. 1 : Up. 10 : Sen. 640 : Cost 5.0 : Time 10.00s : 100.00 words/s",
            "[2026-12-07 10:01:40] [valid] Ep. 1 : Up. 20 : cross-entropy : 130 : new best",
            CONTINUED,
            "[2026-12-07 13:01:40] Ep. 1 : Up. 30 : Sen. 1920 : Cost 5.0 : Time 10.00s : 100.00 words/s",
            "[2026-12-07 13:02:00] [valid] Ep. 1 : Up. 30 : cross-entropy : 120 : new best",
            "[2026-12-07 13:02:30] Ep. 1 : Up. 40 : Sen. 2560 : Cost 5.0 : Time 10.00s : 100.00 words/s")
        self.assertEqual(seconds, 150)
        self.assertEqual([p[0] for p in points], [100, 120])
        self.assertEqual(words / seconds, 3000 / 150)

    def test_run_until_marks_the_continued_run(self):
        path = write_log("[2026-12-07 10:00:00] Ep. 1 : Up. 10 : Sen. 640 : Cost 5.0 : Time 10.00s : 100.00 words/s",
                         "[2026-12-07 10:01:40] Ep. 1 : Up. 20 : Sen. 1280 : Cost 5.0 : Time 10.00s : 100.00 words/s")
        self.addCleanup(os.remove, path)
        line = "[2026-12-07 13:01:40] Ep. 1 : Up. 30 : Sen. 1920 : Cost 5.0 : Time 10.00s : 100.00 words/s"
        self.assertEqual(compare.run_until([sys.executable, "-c", f"print({line!r})"], path, dict(os.environ),
                                           append=True), 0)
        with open(path) as f:
            self.assertEqual(f.read().splitlines()[2:], [CONTINUED, line])
        self.assertEqual(compare.parse_log(path)[4], 100)  # the 3 hours between 10:01:40 and 13:01:40 left out

    def test_validations_in_exponent_notation_and_nan(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            points, _, _, _, _ = self.parse(
                "[2026-12-07 10:00:01] [valid] Ep. 1 : Up. 10 : cross-entropy : 1.23457e+06 : new best",
                "[2026-12-07 10:00:02] [valid] Ep. 1 : Up. 20 : cross-entropy : nan : stalled 1 times",
                "[2026-12-07 10:00:03] [valid] Ep. 1 : Up. 30 : cross-entropy : -inf : stalled 2 times",
                "[2026-12-07 10:00:04] [valid] Ep. 1 : Up. 40 : cross-entropy : 98.31 : new best")
        self.assertEqual([p[2] for p in points], [1234570.0, 98.31])
        self.assertIn("update 20 gave cross-entropy nan: left out of the curve", err.getvalue())
        self.assertIn("update 30 gave cross-entropy -inf", err.getvalue())
        self.assertIn(".log", err.getvalue())  # the log named


class Runner(unittest.TestCase):
    def test_a_stopped_run_that_does_not_end_is_killed_after_its_grace(self):
        # a run that ignores SIGTERM, stopped after 0.5 s (the first poll), given 1 s to end
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d, True)
        log, pid = os.path.join(d, "log.txt"), os.path.join(d, "pid")
        hang = ("import os, signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                f"open({pid!r}, 'w').write(str(os.getpid())); time.sleep(60)")
        start = time.time()
        why = compare.run_until([sys.executable, "-c", hang], log, dict(os.environ), seconds=0.1, grace=1)
        self.assertEqual(why, "did not end within 1 s of its stop: killed")
        self.assertLess(time.time() - start, 10)
        with open(pid) as f, self.assertRaises(ProcessLookupError):  # killed and reaped
            os.kill(int(f.read()), 0)

    def test_a_configuration_killed_after_its_grace_is_a_failure(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d, True)
        marian = os.path.join(d, "marian")  # prints a display line, then ignores SIGTERM
        with open(marian, "w") as f:
            f.write("#!/usr/bin/python3\nimport signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                    "print('[2026-12-07 10:00:00] Ep. 1 : Up. 10 : Sen. 640 : Cost 5.0 : Time 10.00s : "
                    "100.00 words/s', flush=True)\ntime.sleep(60)\n")
        os.chmod(marian, os.stat(marian).st_mode | stat.S_IXUSR)
        for name, text in (("base.yml", "x\n"), ("vocab", "x\n"), ("valid", "x\n"), ("configs.in", "1x1 hang|1|1|\n")):
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        configs = os.path.join(d, "configs.in")
        out = os.path.join(d, "out")
        r = subprocess.run([COMPARE, "--configs", configs, "--base", os.path.join(d, "base.yml"),
                            "--vocabs", os.path.join(d, "vocab"), os.path.join(d, "vocab"),
                            "--valid", os.path.join(d, "valid"), os.path.join(d, "valid"), "--marian", marian,
                            "--launcher", "in-process", "--minutes", "0.01", "--stop-grace", "1", "--out", out],
                           capture_output=True, text=True, timeout=120)
        self.assertNotEqual(r.returncode, 0)
        self.assertNotIn("Traceback", r.stderr)
        self.assertIn("compare-configs: 1x1 hang did not end within 1 s of its stop: killed (--stop-grace 1;",
                      r.stderr)
        self.assertIn("1 of 1 configuration(s) failed: 1x1 hang", r.stderr)
        with open(os.path.join(out, "table.md")) as f:  # its one display line: 10 updates, 10 s at 100 words/s
            self.assertIn("| 1x1 hang (failed: did not end within 1 s of its stop: killed) | 10 | 1,000 |", f.read())

    def test_the_parameter_servers_budget_is_split_with_multi_node_in_extra(self):
        # --words 1000 over 4 asynchronous clients (--multi-node given in --extra): 1000 / 4 = 250
        # target words each
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d, True)
        configs = os.path.join(d, "configs.in")
        with open(configs, "w") as f:
            f.write("4x1 ps|4|1|--grad-dropping-rate 0.9\n")

        def after(extra):
            r = subprocess.run([COMPARE, "--configs", configs, "--words", "1000", "--dry-run", f"--extra={extra}",
                                "--launcher", "in-process", "--out", os.path.join(d, "out")],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            return r.stdout.split(" --after ")[1].split()[0]
        self.assertEqual(after("--multi-node"), "250t")
        self.assertEqual(after(""), "1000t")  # not the parameter server: every rank's labels count


if __name__ == "__main__":
    unittest.main()
