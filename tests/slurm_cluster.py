"""A real one-node Slurm cluster for the tests: munge, slurmctld and slurmd from Debian's ``slurm-wlm`` and
``munge`` packages, configured in a temporary directory and listening on loopback only.

Nothing of the machine's own Slurm or munge is used or touched: the munge key, socket, state and logs, the
controller's state, the node's spool, every pid and log file live under the cluster's directory; the
daemons listen on free loopback ports; clients reach them through ``$SLURM_CONF``, set in
:attr:`SlurmCluster.env` only (never in the test process). The plugins avoid cgroups (this machine has
cgroup v1 and no systemd): ``proctrack/linuxproc``, ``task/none``. ``JobRequeue=1``, so batch jobs can be
requeued. The daemons run as root (``SlurmUser=root``), as CI does.

    cluster = SlurmCluster.start(directory)   # raises SlurmUnavailable with the reason if it cannot
    job = cluster.sbatch("--array=1-3", "grade.sbatch", cwd=...)
    cluster.wait_for(lambda: ..., timeout=60, what="...")
    cluster.stop()                            # cancels every job, stops the daemons (also on failure)
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

NODE = "ppnode"
PARTITION = "grading"
COMMANDS = ("munged", "munge", "slurmctld", "slurmd", "sbatch", "scontrol", "squeue", "sinfo", "scancel")
INSTALL_HINT = (
    "install Slurm and munge (Debian/Ubuntu: apt-get install slurm-wlm munge; .ci/run does), or deselect "
    'these tests with -m "not slurm"'
)


class SlurmUnavailable(RuntimeError):
    """The cluster could not be started; the message says why (and holds the daemons' logs)."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _hardware() -> str:
    """This machine's node description as slurmd sees it (``slurmd -C``), without its NodeName."""
    out = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, check=True).stdout
    line = next(x for x in out.splitlines() if x.startswith("NodeName="))
    return " ".join(w for w in line.split() if not w.startswith("NodeName="))


@dataclass
class SlurmCluster:
    root: Path
    env: dict[str, str]
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)

    # ------------------------------------------------------------------------------------ start / stop

    @classmethod
    def start(cls, root: Path, timeout: float = 60) -> SlurmCluster:
        missing = [c for c in COMMANDS if shutil.which(c) is None]
        if missing:
            raise SlurmUnavailable(f"{', '.join(missing)} not found: {INSTALL_HINT}")
        if os.geteuid() != 0:
            raise SlurmUnavailable("the test cluster runs its daemons as root (SlurmUser=root), as CI does")
        root = Path(root)
        for sub in ("munge", "state", "spool", "log"):
            (root / sub).mkdir(parents=True, exist_ok=True)
        root.chmod(0o755)
        (root / "munge").chmod(0o755)  # clients (sbatch, slurmstepd) must reach the socket
        key = root / "munge" / "munge.key"
        key.write_bytes(secrets.token_bytes(1024))
        key.chmod(0o400)
        sock = root / "munge" / "munge.socket"
        conf = root / "slurm.conf"
        conf.write_text(
            "\n".join(
                [
                    "ClusterName=ppcourse",
                    "SlurmctldHost=localhost(127.0.0.1)",
                    f"SlurmctldPort={_free_port()}",
                    f"SlurmdPort={_free_port()}",
                    "SlurmUser=root",
                    "SlurmdUser=root",
                    "AuthType=auth/munge",
                    "CredType=cred/munge",
                    f"AuthInfo=socket={sock}",
                    f"StateSaveLocation={root / 'state'}",
                    f"SlurmdSpoolDir={root / 'spool'}",
                    f"SlurmctldPidFile={root / 'slurmctld.pid'}",
                    f"SlurmdPidFile={root / 'slurmd.pid'}",
                    f"SlurmctldLogFile={root / 'log' / 'slurmctld.log'}",
                    f"SlurmdLogFile={root / 'log' / 'slurmd.log'}",
                    "MailProg=/bin/true",
                    # no cgroups: this machine has cgroup v1 and no systemd
                    "ProctrackType=proctrack/linuxproc",
                    "TaskPlugin=task/none",
                    "JobAcctGatherType=jobacct_gather/none",
                    "AccountingStorageType=accounting_storage/none",
                    "SelectType=select/cons_tres",
                    "SelectTypeParameters=CR_Core",
                    "SchedulerType=sched/backfill",
                    "MpiDefault=none",
                    "ReturnToService=2",
                    "JobRequeue=1",
                    "MinJobAge=3600",  # finished jobs stay visible to scontrol for the whole test
                    "SlurmctldDebug=info",
                    "SlurmdDebug=info",
                    f"NodeName={NODE} NodeHostname=localhost NodeAddr=127.0.0.1 {_hardware()} State=UNKNOWN",
                    f"PartitionName={PARTITION} Nodes={NODE} Default=YES MaxTime=INFINITE State=UP",
                    "",
                ]
            ),
            encoding="utf-8",
        )
        env = {**os.environ, "SLURM_CONF": str(conf)}
        for name in list(env):  # a Slurm job running these tests must not leak its own job into ours
            if name.startswith(("SLURM_", "SBATCH_", "SQUEUE_", "SRUN_")) and name != "SLURM_CONF":
                del env[name]
        cluster = cls(root=root, env=env)
        try:
            cluster._daemon(
                "munged",
                ["munged", "--foreground", "--force", f"--socket={sock}", f"--key-file={key}"]
                + [f"--{o}-file={root / 'munge' / ('munged.' + o)}" for o in ("log", "pid", "seed")],
            )
            cluster.wait_for(sock.exists, 20, "munged's socket")
            cluster._daemon("slurmctld", ["slurmctld", "-D", "-i"])
            cluster._daemon("slurmd", ["slurmd", "-D", "-N", NODE])
            cluster.wait_for(lambda: cluster.node_state() == "idle", timeout, "the node to be idle")
        except BaseException:
            cluster.stop()
            raise
        return cluster

    def _daemon(self, name: str, argv: list[str]) -> None:
        log = open(self.root / "log" / f"{name}.out", "wb")  # noqa: SIM115 - the daemon keeps it
        try:
            self.procs[name] = subprocess.Popen(
                argv, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        finally:
            log.close()

    def logs(self) -> str:
        parts = []
        for path in sorted((self.root / "log").glob("*")):
            text = path.read_text(encoding="utf-8", errors="replace").splitlines()
            parts.append(f"--- {path.name} (last lines)\n" + "\n".join(text[-25:]))
        return "\n".join(parts)

    def stop(self) -> None:
        """Cancel every job, wait until the node runs none (at most 30 s), stop the daemons."""
        try:
            if "slurmctld" in self.procs and self.procs["slurmctld"].poll() is None:
                subprocess.run(["scancel", "--full", "--user=root"], env=self.env, capture_output=True)
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline and self._running_pids():
                    time.sleep(0.5)
        finally:
            for name in ("slurmd", "slurmctld", "munged"):
                proc = self.procs.get(name)
                if proc is None or proc.poll() is not None:
                    continue
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(timeout=15)

    def _running_pids(self) -> list[int]:
        proc = subprocess.run(["scontrol", "listpids"], env=self.env, capture_output=True, text=True)
        return [
            int(w.split()[0]) for w in proc.stdout.splitlines()[1:] if w.split() and w.split()[0].isdigit()
        ]

    # ------------------------------------------------------------------------------------ commands

    def run(self, argv: list[str], cwd: Path | None = None, extra_env: dict | None = None, check=True):
        """A command with the cluster's environment (``$SLURM_CONF``); returns the CompletedProcess."""
        proc = subprocess.run(
            argv, cwd=cwd, env={**self.env, **(extra_env or {})}, capture_output=True, text=True, timeout=120
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"{argv} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        return proc

    def node_state(self) -> str:
        proc = self.run(["sinfo", "--noheader", "--format=%T", f"--nodes={NODE}"], check=False)
        return proc.stdout.strip()

    def jobs(self, job_id: str) -> list[dict[str, str]]:
        """``scontrol show job -o`` as dicts, one per job (an array gives one per task)."""
        proc = self.run(["scontrol", "show", "job", "--oneliner", job_id])
        return [dict(re.findall(r"(\w+)=(\S*)", line)) for line in proc.stdout.splitlines() if line.strip()]

    def job(self, job_id: str) -> dict[str, str]:
        (found,) = self.jobs(job_id)
        return found

    def pids(self, job_id: str) -> list[int]:
        """The processes of a running job or array task (``scontrol listpids``, which wants the task's own
        job id, not ``ARRAY_K``; proctrack/linuxproc tracks them)."""
        proc = self.run(["scontrol", "listpids", self.job(job_id)["JobId"]], check=False)
        return [
            int(w.split()[0]) for w in proc.stdout.splitlines()[1:] if w.split() and w.split()[0].isdigit()
        ]

    def wait_for(self, predicate: Callable[[], object], timeout: float, what: str, every: float = 0.2):
        """Poll until ``predicate()`` is truthy; returns it. On timeout, fails with the daemons' logs."""
        deadline = time.monotonic() + timeout
        while True:
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    raise SlurmUnavailable(
                        f"{name} exited ({proc.returncode}) waiting for {what}\n{self.logs()}"
                    )
            got = predicate()
            if got:
                return got
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout:g} s waiting for {what}\n{self.logs()}")
            time.sleep(every)
