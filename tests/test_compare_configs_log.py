"""scripts/compare-configs' reading of a run's log: rank 0's bytes from its display lines, where
some or all of the sums were MPI_Allreduce's (whose bytes the lines do not count), by hand."""
import importlib.machinery
import importlib.util
import os
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
_loader = importlib.machinery.SourceFileLoader("compare_configs", os.path.join(ROOT, "scripts", "compare-configs"))
compare = importlib.util.module_from_spec(importlib.util.spec_from_loader("compare_configs", _loader))
_loader.exec_module(compare)


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


if __name__ == "__main__":
    unittest.main()
