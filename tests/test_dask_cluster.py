"""Cluster files (`--scheduler CLUSTER.toml`): the local example sweeps to the local pool's
bytes, the SLURM and PBS examples build their job scripts, and every mistake is one line."""

from __future__ import annotations

import gc
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tcpeval.scenario import ScenarioError
from tcpeval.sweep.dask import built, load_cluster, started
from tcpeval.sweep.tomlwriter import dumps
from test_sweep import tiny_grid

CLUSTERS = Path(__file__).parent.parent / "examples" / "clusters"
RESULT_FILES = ("summary.json", "flows.parquet", "links.parquet", "summary.parquet")


def tcpeval(*args: str | Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "tcpeval", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def run_files(out: Path) -> dict[str, bytes]:
    """Every run's result files, the wall time (the one thing that may differ) taken out."""
    files = {}
    for path in sorted((out / "runs").glob("*/*")):
        if path.name == "summary.json":
            text = re.sub(r'\n *"wall_seconds": [^\n]*', "", path.read_text())
            files[f"{path.parent.name}/{path.name}"] = text.encode()
        elif path.name in ("flows.parquet", "links.parquet"):
            files[f"{path.parent.name}/{path.name}"] = path.read_bytes()
    return files


def write_cluster(folder: Path, text: str) -> Path:
    path = folder / "cluster.toml"
    path.write_text(text)
    return path


@pytest.fixture
def batch_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """sbatch, qsub and their cancel commands on PATH, accepting every job and running none."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("sbatch", "qsub", "scancel", "qdel"):
        command = bin_dir / name
        command.write_text("#!/bin/sh\necho 'Submitted batch job 42'\n")
        command.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    return bin_dir


def test_the_local_example_sweeps_the_same_bytes_as_the_local_pool(tmp_path: Path) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text(dumps(tiny_grid(**{"bottleneck.rate": ["10Mbps", "20Mbps"]})))
    on_pool = tcpeval("sweep", grid, "--out", tmp_path / "pool", "--jobs", "2")
    on_cluster = tcpeval(
        "sweep", grid, "--out", tmp_path / "cluster", "--scheduler", CLUSTERS / "local.toml"
    )

    assert on_pool.returncode == 0, on_pool.stderr
    assert on_cluster.returncode == 0, on_cluster.stderr
    assert "4 runs: 4 done" in on_cluster.stdout
    pool_files = run_files(tmp_path / "pool")
    assert len(pool_files) == 4 * 3
    assert run_files(tmp_path / "cluster") == pool_files


@pytest.mark.usefixtures("batch_commands")
@pytest.mark.parametrize(
    ("example", "directives"),
    [
        ("slurm.toml", ["#SBATCH -J tcpeval", "#SBATCH --mem=4G", "#SBATCH -t 02:00:00"]),
        ("pbs.toml", ["#PBS -N tcpeval", "#PBS -l select=1:ncpus=1:mem=", "walltime=02:00:00"]),
    ],
)
def test_the_batch_examples_build_one_single_threaded_worker_per_job(
    example: str, directives: list[str]
) -> None:
    spec = load_cluster(CLUSTERS / example)
    cluster = built(spec)
    try:
        script = cluster.job_script()
    finally:
        cluster.close()
    assert spec.workers == 16
    for directive in directives:
        assert directive in script
    assert "--nthreads 1" in script


def test_a_batch_cluster_without_its_submit_command_is_refused_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ScenarioError) as raised:
        load_cluster(CLUSTERS / "slurm.toml")
    assert str(raised.value).startswith(
        "cluster.class: 'dask_jobqueue.SLURMCluster' submits its workers with 'sbatch', "
        "which is not on PATH here"
    )


@pytest.mark.usefixtures("batch_commands")
def test_no_worker_within_the_start_timeout_is_an_error_naming_it(tmp_path: Path) -> None:
    """The fake sbatch queues the job for ever: no worker can join."""
    path = write_cluster(
        tmp_path,
        """
        [cluster]
        class = "dask_jobqueue.SLURMCluster"
        workers = 1
        start_timeout = "1s"
        [cluster.options]
        cores = 1
        memory = "1GB"
        """,
    )
    with pytest.raises(ScenarioError) as raised, started(load_cluster(path)):
        pass
    assert str(raised.value).startswith("cluster.start_timeout: '1s' passed before any worker")


def test_a_class_outside_dask_is_refused_before_anything_is_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "planted.py").write_text("open(__file__ + '.ran', 'w').close()\nCluster = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    path = write_cluster(tmp_path, '[cluster]\nclass = "planted.Cluster"\nworkers = 1\n')
    with pytest.raises(ScenarioError) as raised:
        load_cluster(path)
    assert str(raised.value).startswith("cluster.class: 'planted.Cluster' must be a class of")
    assert not (tmp_path / "planted.py.ran").exists()


@pytest.mark.parametrize(
    ("cluster", "message"),
    [
        (
            'class = "distributed.LocalCluster"\nworkers = 1\ncores = 1',
            "cluster.cores: unknown key",
        ),
        (
            'class = "distributed.Client"\nworkers = 1',
            "cluster.class: 'distributed.Client' is not a Dask cluster class",
        ),
        (
            'class = "distributed.NoSuchCluster"\nworkers = 1',
            "cluster.class: 'distributed.NoSuchCluster' is not a Dask cluster class",
        ),
        (
            'class = "dask_jobqueue.nowhere.Cluster"\nworkers = 1',
            "cluster.class: 'dask_jobqueue.nowhere.Cluster' cannot be imported: "
            "No module named 'dask_jobqueue.nowhere'",
        ),
        ('class = "distributed.LocalCluster"\nworkers = 0', "cluster.workers: '0' is invalid"),
        ('class = "distributed.LocalCluster"', "cluster.workers: missing (required)"),
    ],
)
def test_a_mistake_in_a_cluster_file_is_one_line_naming_the_field(
    tmp_path: Path, cluster: str, message: str
) -> None:
    with pytest.raises(ScenarioError) as raised:
        load_cluster(write_cluster(tmp_path, f"[cluster]\n{cluster}\n"))
    assert str(raised.value).startswith(message)


@pytest.mark.usefixtures("batch_commands")
# The half-built SLURMCluster warns that it was never closed when it is collected (below).
@pytest.mark.filterwarnings("ignore:unclosed cluster:ResourceWarning")
def test_options_the_class_refuses_are_one_line_naming_the_class(tmp_path: Path) -> None:
    path = write_cluster(tmp_path, '[cluster]\nclass = "dask_jobqueue.SLURMCluster"\nworkers = 1\n')
    with pytest.raises(ScenarioError) as raised:
        built(load_cluster(path))
    message = str(raised.value)
    del raised
    gc.collect()
    assert message.startswith(
        "cluster.options: are refused by dask_jobqueue.SLURMCluster: You must specify"
    )


def test_the_command_says_what_is_wrong_in_one_line(tmp_path: Path) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text(dumps(tiny_grid()))
    cluster = write_cluster(tmp_path, '[cluster]\nclass = "os.system"\nworkers = 1\n')
    bad_file = tcpeval("sweep", grid, "--out", tmp_path / "a", "--scheduler", cluster)
    no_address = tcpeval("sweep", grid, "--out", tmp_path / "b", "--scheduler", "nowhere")

    assert (bad_file.returncode, no_address.returncode) == (2, 2)
    assert bad_file.stderr.startswith("error: cluster.class: 'os.system' must be a class of")
    assert no_address.stderr == (
        "error: --scheduler: 'nowhere' cannot be reached: missing port number in address "
        "'nowhere'\n"
    )


def test_a_mistake_in_the_grid_is_reported_before_a_cluster_file_submits_jobs(
    tmp_path: Path, batch_commands: Path
) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text(dumps(tiny_grid(**{"bottleneck.rtae": ["10Mbps"]})))
    submitted = batch_commands / "submitted"
    (batch_commands / "sbatch").write_text(f"#!/bin/sh\ntouch {submitted}\necho 'Submitted'\n")
    # Were the grid checked only once the cluster is up, the fake queue would start no worker
    # and the sweep would wait out start_timeout: keep that short.
    slurm = (CLUSTERS / "slurm.toml").read_text().replace('"30min"', '"5s"')
    cluster = write_cluster(tmp_path, slurm)

    done = tcpeval("sweep", grid, "--out", tmp_path / "out", "--scheduler", cluster)

    assert done.returncode == 2, done.stderr
    assert "rtae" in done.stderr
    assert not submitted.exists()


def test_loading_a_batch_cluster_leaves_ctrl_c_as_it_was(batch_commands: Path) -> None:
    # dask_jobqueue replaces the SIGINT handler with sys.exit when imported: in a fresh process,
    # so that the import really happens here.
    check = (
        "import signal, sys\n"
        "from tcpeval.sweep.dask import load_cluster\n"
        "before = signal.getsignal(signal.SIGINT)\n"
        f"load_cluster({str(CLUSTERS / 'slurm.toml')!r})\n"
        "sys.exit(0 if signal.getsignal(signal.SIGINT) is before else 1)\n"
    )
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
