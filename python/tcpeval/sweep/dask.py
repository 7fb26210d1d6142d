"""Runs on Dask: on a scheduler already running, on a LocalCluster started here, or on a cluster
described in a file, for `--scheduler CLUSTER.toml`: the command that sweeps on this machine
sweeps on a SLURM or PBS cluster too, through dask-jobqueue (docs/sweeps.md).

    [cluster]
    class = "dask_jobqueue.SLURMCluster"   # or dask_jobqueue.PBSCluster, distributed.LocalCluster
    workers = 16                           # Dask worker processes to scale to
    start_timeout = "10min"                # for the first worker to join
    [cluster.options]                      # the class's keyword arguments
    cores = 1
    memory = "4GB"

The class must be one of `distributed` or `dask_jobqueue`: a file that could name any class
could run any code, and a cluster file travels like a scenario file.
"""

from __future__ import annotations

import importlib
import logging
import re
import shutil
import signal
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from tcpeval.scenario import ScenarioError
from tcpeval.scenario.errors import from_validation_error
from tcpeval.scenario.fields import PositiveTime
from tcpeval.scenario.loading import _read_toml, one_line
from tcpeval.sweep import rundir
from tcpeval.sweep.grid import RunSpec
from tcpeval.sweep.pool import Work
from tcpeval.units import Duration, parse_duration

CLUSTER_FILE_SUFFIX = ".toml"
ALLOWED_CLASS = re.compile(r"(distributed|dask_jobqueue)(\.[A-Za-z_]\w*)+")
DEFAULT_START_TIMEOUT = "10min"
LOCAL_CLUSTER = "local"
NANNY_LOGGER = "distributed.nanny"


class ClusterSpec(BaseModel):
    """The `[cluster]` table of a cluster file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    class_name: str = Field(alias="class", description="e.g. distributed.LocalCluster")
    workers: int = Field(ge=1, description="Dask worker processes to scale to.")
    start_timeout: PositiveTime = Field(
        default=parse_duration(DEFAULT_START_TIMEOUT),
        description="How long to wait for the first worker: a batch job may sit in the queue.",
    )
    options: dict[str, Any] = Field(default_factory=dict, description="The class's arguments.")

    @field_validator("class_name")
    @classmethod
    def _of_dask(cls, name: str) -> str:
        if not ALLOWED_CLASS.fullmatch(name):
            raise ValueError(
                "must be a class of distributed or dask_jobqueue, e.g. 'dask_jobqueue.SLURMCluster'"
            )
        return name


class ClusterFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    cluster: ClusterSpec


def load_cluster(path: str | Path) -> ClusterSpec:
    """The file's `[cluster]`, checked as far as can be without starting it: its class exists
    and is a Dask cluster, and the command that submits its jobs (sbatch, qsub) is here.
    Raises ScenarioError naming the field and the value."""
    try:
        spec = ClusterFile.model_validate(_read_toml(Path(path))).cluster
    except ValidationError as error:
        raise from_validation_error(error) from None
    _check_submit_command(spec, cluster_class(spec))
    return spec


@contextmanager
def scheduler_of(scheduler: str | None) -> Iterator[str | None]:
    """What `--scheduler` names, as `sweep` takes it: an address or "local" as given; a cluster
    file as the address of that cluster, started for the command and closed after it."""
    if scheduler is None or not scheduler.endswith(CLUSTER_FILE_SUFFIX):
        yield scheduler
        return
    with started(load_cluster(scheduler)) as address:
        yield address


@contextmanager
def started(spec: ClusterSpec) -> Iterator[str]:
    """The scheduler address of the cluster `spec` describes, scaled to its workers once the
    first is running (the others join as their jobs start); closed on leaving."""
    cluster = built(spec)
    try:
        cluster.scale(spec.workers)
        _wait_for_a_worker(cluster, spec.start_timeout)
        yield cluster.scheduler_address
    finally:
        close_quietly(cluster)


def client_of(scheduler: str | Any) -> Any:
    """A dask Client of `scheduler`, an address or a cluster started here; an address that
    cannot be reached (or is no address) is a ScenarioError naming it, not dask's traceback."""
    from distributed import Client

    try:
        return Client(scheduler)
    except (OSError, ValueError) as error:
        raise ScenarioError("--scheduler", scheduler, f"cannot be reached: {error}") from None


def cluster_class(spec: ClusterSpec) -> type:
    from distributed.deploy import Cluster

    module_name, _, name = spec.class_name.rpartition(".")
    on_interrupt = signal.getsignal(signal.SIGINT)
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        reason = f"cannot be imported: {error}"
        raise ScenarioError("cluster.class", spec.class_name, reason) from None
    finally:
        # dask_jobqueue's runner module makes Ctrl-C exit the process when it is imported;
        # a sweep's Ctrl-C must stay a KeyboardInterrupt, which says what finished.
        signal.signal(signal.SIGINT, on_interrupt)
    found = getattr(module, name, None)
    if not (isinstance(found, type) and issubclass(found, Cluster)):
        raise ScenarioError("cluster.class", spec.class_name, "is not a Dask cluster class")
    return found


def _check_submit_command(spec: ClusterSpec, cls: type) -> None:
    """A batch-queue cluster starts each worker as a job; without its submit command the
    workers would never come, and dask would only log why."""
    command = getattr(getattr(cls, "job_cls", None), "submit_command", None)
    if command and shutil.which(command.split()[0]) is None:
        raise ScenarioError(
            "cluster.class",
            spec.class_name,
            f"submits its workers with '{command}', which is not on PATH here: "
            "run tcpeval where jobs are submitted (a login node)",
        )


def built(spec: ClusterSpec) -> Any:
    """The cluster `spec` describes, not yet scaled: no job is submitted."""
    cls = cluster_class(spec)
    try:
        return cls(**spec.options)
    except Exception as error:  # what the class refuses is in its options, the file's to fix
        raise ScenarioError(
            "cluster.options", None, f"are refused by {spec.class_name}: {one_line(error)}"
        ) from None


def _wait_for_a_worker(cluster: Any, timeout: Duration) -> None:
    try:
        cluster.wait_for_workers(1, timeout=timeout.seconds)
    except TimeoutError:
        raise ScenarioError(
            "cluster.start_timeout",
            timeout.given,
            "passed before any worker joined: are its jobs still queued (squeue, qstat)?",
        ) from None


def dask_cluster(
    work: Work, specs: Iterable[RunSpec], sweep_dir: Path, jobs: int, address: str
) -> Iterator[rundir.Outcome]:
    """Run on the Dask scheduler at `address`, or on a LocalCluster of `jobs` single-threaded
    worker processes when `address` is "local" (a cluster file is started by the caller:
    `scheduler_of`). Dask retries a run whose worker died; a run that keeps killing workers
    comes back as KilledWorker and is recorded as failed."""
    from dask.distributed import LocalCluster, as_completed

    cluster = None
    if address == LOCAL_CLUSTER:
        cluster = LocalCluster(
            n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None
        )
    try:
        with client_of(cluster or address) as client:
            futures = {
                client.submit(
                    work, spec, str(sweep_dir), key=f"run-{spec.run_id}", pure=False
                ): spec
                for spec in specs
            }
            for future in as_completed(futures):
                try:
                    yield future.result()
                except Exception as error:
                    yield rundir.record_error(sweep_dir, futures[future], rundir.one_line(error))
    finally:
        if cluster is not None:
            close_quietly(cluster)


def close_quietly(cluster: Any) -> None:
    """Close a LocalCluster started here without the nanny's "still alive after 4.0 seconds,
    killing" warnings: by now every run's outcome is written, and on a busy host a worker is
    often slower than that to exit (two warnings per sweep on 2 cores), which is no news."""
    nanny = logging.getLogger(NANNY_LOGGER)
    level = nanny.level
    nanny.setLevel(logging.ERROR)
    try:
        cluster.close()
    finally:
        nanny.setLevel(level)
