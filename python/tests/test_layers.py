"""pin() inside a Slurm step whose CUDA_VISIBLE_DEVICES is unset (issue 30 item 1): only the step's GPUs."""

import os
import unittest

import gpumap
from test_gpumap import SimulatedHost


class PinInsideASlurmStep(SimulatedHost):
    host = "dgx8"

    def setUp(self):
        super().setUp()
        # No device cgroup on a simulated host: without care, CUDA would show all eight GPUs.
        os.environ.update({"SLURM_JOB_ID": "7", "SLURM_STEP_GPUS": "2,3", "SLURM_JOB_GPUS": "2,3"})

    def test_pin_takes_only_the_steps_gpus(self):
        p = gpumap.pin()
        try:
            self.assertEqual(len(p.devices), 1)
            self.assertIn(p.devices[0]["nvml_index"], (2, 3), p.devices)
            self.assertEqual(os.environ["CUDA_DEVICE_ORDER"], "PCI_BUS_ID")
            self.assertIn(os.environ["CUDA_VISIBLE_DEVICES"], ("2", "3", p.uuids[0]))
        finally:
            p.release()
        for v in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"):  # pin set them for this process
            os.environ.pop(v, None)
        both = gpumap.pin(gpus=2)
        try:
            self.assertEqual(sorted(d["nvml_index"] for d in both.devices), [2, 3])
        finally:
            both.release()

    def test_more_than_the_allocation_is_refused_naming_it(self):
        with self.assertRaises(gpumap.NotEnoughGpusError) as e:
            gpumap.pin(gpus=3)
        self.assertIn("SLURM_STEP_GPUS=2,3", str(e.exception))
        self.assertNotIn("CUDA_VISIBLE_DEVICES", os.environ)  # nothing half done


if __name__ == "__main__":
    unittest.main()
