"""The scripts' bad inputs end with one clear line that names the problem, never a Python
traceback, a raw message of the tool underneath, or a silent success: compare-configs (its
configurations file, its options, a run that fails), plan-cluster (the device profile, the links),
timeline-summary, get-multi30k, make-synthetic-corpus, mpirun-bounded, commbench-table,
elastic-check and simnet (its option values; as root only, as it needs root).

Usage: test_script_errors.py BUILD/src"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
BIN = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(ROOT, "build", "src"))


def script(name):
    return os.path.join(ROOT, "scripts", name)


class BadInputs(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir, True)

    def path(self, name, text=None):
        p = os.path.join(self.dir, name)
        if text is not None:
            with open(p, "w") as f:
                f.write(text)
        return p

    def refused(self, cmd, *words, code=None):
        """cmd fails (with `code` where given) and its last line names every word, no traceback"""
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=self.dir, timeout=120)
        out = (r.stdout + r.stderr).strip()
        self.assertNotEqual(r.returncode, 0, f"{cmd} succeeded:\n{out}")
        if code is not None:
            self.assertEqual(r.returncode, code, out)
        self.assertNotIn("Traceback", out, cmd)
        last = out.splitlines()[-1] if out else ""
        for w in words:
            self.assertIn(w, last, f"{cmd}:\n{out}")
        return r

    def test_compare_configs(self):
        # --vocabs named: a fresh clone has no Multi30k vocabulary (the default)
        vocabs = [self.path("v.src.yml", "</s>: 0\n<unk>: 1\n"), self.path("v.trg.yml", "</s>: 0\n<unk>: 1\n")]
        cc = [script("compare-configs"), "--minutes", "0.2", "--out", self.path("out"), "--vocabs"] + vocabs
        for text, words in (("bad line\n", ["line 1", "'bad line'", "NAME|NODES|DEVICES|MARIAN OPTIONS"]),
                            ("a|x|1|\n", ["line 1", "'a|x|1|'"]),
                            ("# a comment\na|0|1|\n", ["line 2", "'a|0|1|'"]),
                            ("a b|1|1|\na-b|1|1|\n", ["line 2", "'a-b'", "a-b", "'a b'"]),
                            ("# nothing\n", ["holds no configuration"])):
            self.refused(cc + ["--configs", self.path("c.txt", text)], "compare-configs:", *words)
        self.refused(cc + ["--configs", self.path("missing.txt")], "compare-configs:", "missing.txt is not a file")
        ok = self.path("ok.txt", "1x1|1|1|\n")
        self.refused(cc + ["--configs", ok, "--minutes", "-3"], "budget")
        self.refused(cc + ["--configs", ok, "--out", self.path("a-file", "x")], "--out", "is a file")
        self.refused(cc + ["--configs", ok, "--valid", self.path("none.src"), self.path("none.trg")],
                     "--valid", "none.src is not a file")
        self.refused(cc + ["--configs", ok, "--plot-only"], "--plot-only", "no log of '1x1'")
        # a run that fails: named with its error, its row marked, and the exit status says so
        data = self.path("data")
        subprocess.run(["/usr/bin/python3", script("make-synthetic-corpus"), data, "--train", "50"], check=True,
                       capture_output=True)
        files = [os.path.join(data, f) for f in ("train.src", "train.trg")]
        r = self.refused(cc + ["--configs", self.path("bad-option.txt", "1x1|1|1|--no-such-option\n"),
                               "--marian", os.path.join(BIN, "marian"), "--base", self.path("base.yml", "type: transformer\n"),
                               "--valid"] + files,
                         "compare-configs: 1 of 1 configuration(s) failed: 1x1", code=1)
        self.assertIn("1x1 failed (exit 1): Error: Unknown option '--no-such-option'", r.stderr)
        with open(os.path.join(self.dir, "out", "table.md")) as f:
            self.assertIn("| 1x1 (failed: exit 1) |", f.read())

    def test_plan_cluster(self):
        probes = self.path("probes")
        os.makedirs(probes)
        self.path("probes/configs.txt", "1x1 dense|1|1|\n")
        good = ("parameters: 1000\nper-mini-batch:\n  - {sentences: 8, target-words: 100, seconds-per-update: 0.1}\n"
                "  - {sentences: 16, target-words: 200, seconds-per-update: 0.2}\n")
        plan = [script("plan-cluster"), "--probes", probes, "--target", "50", "--out", self.path("plan")]
        for text, words in (("parameters: [1\n", ["is not YAML"]),
                            ("", ["is not a device profile"]),
                            ("just text\n", ["is not a device profile"]),
                            (good.replace("parameters: 1000", "parameters: lots"), ["parameters is 'lots'"]),
                            (good.replace("parameters: 1000\n", ""), ["parameters is missing"]),
                            (good.replace(", seconds-per-update: 0.2", ""), ["seconds-per-update is missing"]),
                            (good.replace("0.2", "-1"), ["seconds-per-update is -1"]),
                            ("parameters: 1000\nper-mini-batch:\n  - {sentences: 8, target-words: 100, "
                             "seconds-per-update: 0.1}\n", ["at least 2 sizes"])):
            self.refused(plan + ["--device-profile", self.path("p.yml", text)], "plan-cluster:", "p.yml", *words)
        self.refused(plan + ["--device-profile", self.path("none.yml")], "none.yml is not a file")
        profile = self.path("good.yml", good)
        for extra, words in ((["--links", "foo"], ["not 'foo'"]), (["--links", "0gbit"], ["above 0"]),
                             (["--latency", "soon"], ["not 'soon'"]), (["--mini-batch", "0"], ["--mini-batch"]),
                             (["--codec-seconds", "dense=abc"], ["'dense=abc'"]),
                             (["--codec-seconds", "dense=-3"], ["'dense=-3'"]),
                             (["--target", "-1"], ["--target", "above 0"])):
            self.refused(plan + ["--device-profile", profile] + extra, "plan-cluster:", *words)
        self.path("probes/configs.txt", "a line without fields\n")
        self.refused(plan + ["--device-profile", profile], "configs.txt, line 1", "NAME|NODES|DEVICES")

    def test_timeline_summary(self):
        ts = [script("timeline-summary")]
        self.assertEqual(subprocess.run(ts + ["--help"], capture_output=True).returncode, 0)
        self.refused(ts + ["--bogus", "x.json"], "unknown option '--bogus'")
        self.refused(ts + ["--merge"], "--merge needs a file")
        self.refused(ts + [self.path("none.json")], "none.json cannot be read")
        self.refused(ts + [self.path("t.json", "not json")], "t.json is not JSON")
        self.refused(ts + [self.path("t.json", "{}")], "has no traceEvents")
        self.refused(ts + [self.path("t.json", '{"traceEvents": []}')], "holds no spans")

    def test_small_scripts(self):
        a_file = self.path("a-file", "x")
        self.assertEqual(subprocess.run([script("get-multi30k"), "--help"], capture_output=True).returncode, 0)
        self.refused([script("get-multi30k"), a_file], "get-multi30k:", "is a file")
        self.refused([script("get-multi30k"), self.path("m30k"), self.path("nowhere")], "nowhere holds no Multi30k copy")
        corpus = ["/usr/bin/python3", script("make-synthetic-corpus")]
        self.refused(corpus + [self.path("syn"), "--train", "0"], "--train")
        self.refused(corpus + [a_file], "is a file")
        self.refused([script("mpirun-bounded"), "--grace", "-5", "-np", "1", "/bin/true"], "--grace -5")
        self.refused([script("mpirun-bounded"), "--elastic", "--hostfile", self.path("no-hosts"), "-np", "2", "/bin/true"],
                     "the hostfile", "is not a file")
        for option, value in (("--nodes", "x"), ("--size", "-5"), ("--reps", "0"), ("--densities", "abc"),
                              ("--rate-mbit", "fast")):
            self.refused([script("commbench-table"), option, value], f"{option} '{value}'", code=2)
        self.refused([script("elastic-check"), "--updates", "x"], "--updates", code=2)
        self.refused([script("elastic-check"), "--work", self.dir], "holds other files", code=2)

    @unittest.skipUnless(os.geteuid() == 0, "simnet needs root")
    def test_simnet(self):
        for args, words in ((["--rate", "5"], ["--rate '5'"]), (["--nodes", "x"], ["--nodes 'x'"]),
                            (["--nodes", "--"], ["--nodes needs a value"]), (["--delay", "5"], ["--delay '5'"]),
                            (["--fault", "cut", "--fault-at", "soon"], ["--fault-at 'soon'"])):
            self.refused([script("simnet")] + args + ["--", "/bin/true"], "simnet:", *words, code=2)


if __name__ == "__main__":
    unittest.main()
