"""The framework helpers of the gpumap package (issue 35): local_device(), and max_memory() /
check_max_memory() speaking accelerate's conventions, on simulated hosts (the fake libcuda in
process, as test_gpumap.py).  What accelerate does with the dicts was measured on the GPU host
(docs/framework-rules.md, "accelerate and transformers")."""

import os
import unittest
import warnings

import gpumap
from test_gpumap import SimulatedHost


class MaxMemory(SimulatedHost):
    host = "seed-mixed"  # CUDA's FASTEST_FIRST order is not nvidia-smi's: cuda:0 is nvidia-smi GPU 1

    def test_a_rekeyed_dict_is_said_out_loud(self):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = gpumap.max_memory({0: "10GiB", 1: "70GiB", "cpu": "64GiB"})
        # The budgets follow the GPUs: nvidia-smi GPU 0's 10GiB is now under its cuda ordinal.
        placed = gpumap.check_max_memory(out)
        self.assertEqual({placed[k]["nvml_index"]: v for k, v in out.items() if k != "cpu"}, {0: "10GiB", 1: "70GiB"})
        self.assertNotEqual({k: v for k, v in out.items() if k != "cpu"}, {0: "10GiB", 1: "70GiB"})
        rekeyed = [w for w in caught if issubclass(w.category, gpumap.ReKeyedWarning)]
        self.assertEqual(len(rekeyed), 1, [str(w.message) for w in caught])
        self.assertIn("0 -> ", str(rekeyed[0].message))
        self.assertIn(repr(out), str(rekeyed[0].message))

    def test_no_warning_when_the_numbers_agree(self):
        os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
        with warnings.catch_warnings():
            warnings.simplefilter("error", gpumap.ReKeyedWarning)
            self.assertEqual(gpumap.max_memory({0: "10GiB", 1: "70GiB"}), {0: "10GiB", 1: "70GiB"})

    def test_cuda_keys_are_refused_with_the_int_to_use(self):
        for fn in (gpumap.max_memory, gpumap.check_max_memory):
            with self.assertRaises(gpumap.ArgumentValueError) as e:
                fn({"cuda:1": "10GiB", "cpu": "1GiB"})
            self.assertIn("{1: ...}", str(e.exception))
            self.assertIn("not recognized", str(e.exception))
            self.assertEqual(e.exception.code, 2)

    def test_a_budget_larger_than_the_gpu_is_refused(self):
        os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
        with self.assertRaises(gpumap.ArgumentValueError) as e:
            gpumap.check_max_memory({0: "100000GiB"})
        self.assertIn("MiB", str(e.exception))
        self.assertIn("nvidia-smi GPU 0", str(e.exception))
        with self.assertRaises(gpumap.ArgumentValueError):
            gpumap.max_memory({0: 10**15})
        # Exactly the GPU's memory is allowed (accelerate takes what it is given).
        mib = gpumap.devices()[0]["memory_total_mib"]
        self.assertIn(0, gpumap.check_max_memory({0: mib * 2**20}))


class LocalDevice(SimulatedHost):
    host = "h200x2"

    def setUp(self):
        super().setUp()
        for v in ("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "MV2_COMM_WORLD_LOCAL_RANK",
                  "PMI_LOCAL_RANK", "SLURM_LOCALID", "SLURM_GPUS_ON_NODE", "GPUMAP_BOUND"):
            os.environ.pop(v, None)

    def test_a_lone_process_uses_cuda_0(self):
        self.assertEqual(gpumap.local_device(), "cuda:0")

    def test_torchrun_and_mpi_ranks(self):
        os.environ["LOCAL_RANK"] = "1"
        self.assertEqual(gpumap.local_device(), "cuda:1")
        del os.environ["LOCAL_RANK"]
        os.environ["OMPI_COMM_WORLD_LOCAL_RANK"] = "1"
        self.assertEqual(gpumap.local_device(), "cuda:1")

    def test_a_rank_past_the_visible_gpus(self):
        os.environ["LOCAL_RANK"] = "2"
        with self.assertRaises(gpumap.NotEnoughGpusError) as e:
            gpumap.local_device()
        self.assertIn("gpumap bind", str(e.exception))
        os.environ["LOCAL_RANK"] = "x"
        with self.assertRaises(gpumap.ArgumentValueError):
            gpumap.local_device()

    def test_bound_and_per_task_ranks_use_cuda_0(self):
        # gpumap bind --keep-visible: this rank's GPU first, the others after it.
        os.environ.update({"LOCAL_RANK": "1", "CUDA_VISIBLE_DEVICES": "1,0", "GPUMAP_BOUND": "1,0"})
        self.assertEqual(gpumap.local_device(), "cuda:0")
        # Slurm binding GPUs per task: two on the node, one visible to this task.
        os.environ.pop("LOCAL_RANK")
        os.environ.pop("GPUMAP_BOUND")
        os.environ.update({"SLURM_LOCALID": "1", "SLURM_GPUS_ON_NODE": "2", "CUDA_VISIBLE_DEVICES": "1"})
        self.assertEqual(gpumap.local_device(), "cuda:0")

    def test_no_gpu(self):
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
        with self.assertRaises(gpumap.NotEnoughGpusError):
            gpumap.local_device()

    def test_torch_takes_the_answer(self):
        try:
            import torch
        except ImportError:
            self.skipTest("no torch in this Python (Debian's python3-torch is for /usr/bin/python3)")
        os.environ["LOCAL_RANK"] = "1"
        self.assertEqual(str(torch.device(gpumap.local_device())), "cuda:1")


if __name__ == "__main__":
    unittest.main()
