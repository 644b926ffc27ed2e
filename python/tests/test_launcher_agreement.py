"""One rule, one home (issue 45): the launchers' rank variables and which cuda:N a rank uses are
the library's (src/env/launcher.h), so the command and the Python package give the same answer
for the same environment.  Each case is run three ways on the simulated h200x2 (two GPUs):
`gpumap explain --json` (its local_device), `gpumap bind --json` (the local rank it binds) and
gpumap.local_device() in this process."""

import json
import os
import unittest

import gpumap
from test_gpumap import SimulatedHost

# Every variable a case may set, cleared before each one.
LAUNCHER_VARS = ("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "MV2_COMM_WORLD_LOCAL_RANK",
                 "PMI_LOCAL_RANK", "SLURM_LOCALID", "SLURM_GPUS_ON_NODE", "GPUMAP_BOUND", "GPUMAP_BOUND_OWN",
                 "SLURM_JOB_ID", "SLURM_STEP_ID", "SLURM_STEP_GPUS", "SLURM_JOB_GPUS", "RANK", "WORLD_SIZE",
                 "LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK", "PMI_RANK",
                 "SLURM_PROCID", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER")

# (environment, the device every front end must give, or the exit code of its refusal)
CASES = [
    ({}, "cuda:0"),
    ({"LOCAL_RANK": "1"}, "cuda:1"),
    ({"OMPI_COMM_WORLD_LOCAL_RANK": "1"}, "cuda:1"),
    ({"MPI_LOCALRANKID": "1"}, "cuda:1"),  # MPICH's Hydra, Intel MPI: once known to Python only
    ({"MV2_COMM_WORLD_LOCAL_RANK": "1"}, "cuda:1"),
    ({"PMI_LOCAL_RANK": "1"}, "cuda:1"),
    ({"SLURM_LOCALID": "1"}, "cuda:1"),
    ({"MPI_LOCALRANKID": "1", "SLURM_LOCALID": "0"}, "cuda:1"),  # mpirun inside sbatch: the MPI's rank
    ({"LOCAL_RANK": "0", "MPI_LOCALRANKID": "1"}, "cuda:0"),  # torchrun inside mpirun: torchrun's
    ({"MPI_LOCALRANKID": "1", "CUDA_VISIBLE_DEVICES": "1"}, "cuda:0"),  # one GPU visible
    ({"SLURM_LOCALID": "1", "SLURM_GPUS_ON_NODE": "2", "CUDA_VISIBLE_DEVICES": "1"}, "cuda:0"),  # per-task
    ({"LOCAL_RANK": "1", "CUDA_VISIBLE_DEVICES": "1,0", "GPUMAP_BOUND": "1,0"}, "cuda:0"),  # bind narrowed it
    ({"MPI_LOCALRANKID": "2"}, 6),  # past the visible GPUs
    ({"LOCAL_RANK": "x", "SLURM_LOCALID": "1"}, 2),  # the first set decides, and is not a number
    ({"LOCAL_RANK": "0", "CUDA_VISIBLE_DEVICES": "-1"}, 6),  # no GPU on purpose
]


class LauncherAgreement(SimulatedHost):
    def run_case(self, env):
        for v in LAUNCHER_VARS:
            os.environ.pop(v, None)
        os.environ.update(env)

    def python_answer(self):
        """(device or None, exit code, {variable, value} or None) from the package."""
        try:
            device = gpumap.local_device()
        except gpumap.GpumapError as e:
            return None, e.code, e.details.get("local_rank")
        return device, 0, gpumap._local_device_answer()["local_rank"]

    def test_the_command_and_the_package_agree(self):
        for env, expected in CASES:
            with self.subTest(env=env):
                self.run_case(env)
                device, code, rank = self.python_answer()
                if isinstance(expected, str):
                    self.assertEqual((device, code), (expected, 0))
                else:
                    self.assertEqual((device, code), (None, expected))

                explained = self.cli("explain", "--json")
                self.assertEqual(explained.returncode, 0, explained.stderr)
                local = json.loads(explained.stdout)["local_device"]
                self.assertEqual(local["device"], device)
                self.assertEqual((local["error"] or {}).get("code", 0), code)
                self.assertEqual(local["local_rank"], rank)

                # bind reads the same variables: it binds the rank the package found, and
                # refuses (exit 2, "no local rank") exactly where the package found none.
                bound = self.cli("bind", "--json", "--no-cpu-bind", "--", "true")
                if rank is None:
                    self.assertEqual(bound.returncode, 2, bound.stderr)
                    self.assertIn("no local rank", bound.stderr)
                    self.assertIn("MPI_LOCALRANKID", bound.stderr)
                elif rank["value"] is None:
                    self.assertEqual(bound.returncode, 2, bound.stderr)
                    self.assertIn(rank["variable"], bound.stderr)
                elif bound.returncode == 0:
                    doc = json.loads(bound.stderr[bound.stderr.index("{"):])  # after bind's notes
                    self.assertEqual(doc["local_rank"], rank)
                elif code == 0:  # too few GPUs to give the rank one of its own: refused, naming the same rank
                    self.assertEqual(bound.returncode, 6, bound.stderr)
                    self.assertIn(f"local rank {rank['value']} ({rank['variable']})", bound.stderr)
                else:  # no GPU at all: both refuse with the same code
                    self.assertEqual(bound.returncode, code, bound.stderr)


if __name__ == "__main__":
    unittest.main()
