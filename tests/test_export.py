"""Exports of a pick: SkyPilot's own task parser, the Kubernetes OpenAPI schema, Slurm."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.conftest import golden, run_cli

SCENARIOS = Path(__file__).parent / "scenarios"
#: A 4-GPU training pick: Llama 2 13B full training capped at 4 GPUs, on the article's
#: catalog, is 4 × A100 80GB (ZeRO-3).
FOUR_GPU = (
    "--task",
    "train",
    "--model",
    "llama-2-13b",
    "--precision",
    "bf16-mixed",
    "--batch",
    "4",
    "--checkpointing",
    "--tokens",
    "2e9",
    "--max-gpus",
    "4",
    "--catalog",
    "article",
)


def export(fmt: str, *args: str) -> str:
    result = run_cli("recommend", *args, "--export", fmt, "--run", "torchrun train.py")
    assert result.code == 0, result.stderr
    return result.stdout


def test_skypilot_task_parses_with_skypilot() -> None:
    text = export("skypilot", *FOUR_GPU)
    doc = yaml.safe_load(text)
    assert doc["resources"] == {"accelerators": "A100-80GB:4"}
    assert doc["num_nodes"] == 1 and doc["run"] == "torchrun train.py"
    assert text.startswith("# whichgpu pick for this workload: 4 × A100 80GB SXM")
    sky = pytest.importorskip(
        "sky", reason="SkyPilot is an optional test extra (pip install 'whichgpu[skypilot]')"
    )
    task = sky.Task.from_yaml_config(doc)
    (resources,) = task.resources
    assert resources.accelerators == {"A100-80GB": 4}


def test_skypilot_spot_and_multi_node() -> None:
    text = export(
        "skypilot",
        "--task",
        "train",
        "--model",
        "llama-2-13b",
        "--tokens",
        "2e9",
        "--checkpointing",
        "--max-gpus",
        "16",
        "--objective",
        "time",
        "--market",
        "spot",
    )
    doc = yaml.safe_load(text)
    assert doc["resources"]["use_spot"] is True
    count = int(doc["resources"]["accelerators"].split(":")[1])
    assert count <= 8 and doc["num_nodes"] >= 1
    sky = pytest.importorskip("sky", reason="SkyPilot is an optional test extra")
    sky.Task.from_yaml_config(doc)


def test_kubernetes_job_is_valid() -> None:
    text = export("kubernetes", *FOUR_GPU)
    doc = yaml.safe_load(text)
    assert doc["kind"] == "Job" and doc["apiVersion"] == "batch/v1"
    container = doc["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"]["limits"] == {"nvidia.com/gpu": 4}
    import kubernetes_validate

    kubernetes_validate.validate(doc, "1.30.0", strict=True)


def test_kubernetes_mig_deployment_is_valid(tmp_path: Path) -> None:
    """D4 on one card: seven replicas, each requesting a 1g.10gb MIG slice."""
    text = (SCENARIOS / "d04-inference-at-scale.toml").read_text()
    path = tmp_path / "d04-one-card.toml"
    path.write_text(text.replace("max_gpus = 8", "max_gpus = 1"))
    out = export("kubernetes", "--file", str(path), "--catalog", "article")
    doc = yaml.safe_load(out)
    assert doc["kind"] == "Deployment" and doc["spec"]["replicas"] == 7
    limits = doc["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert limits == {"nvidia.com/mig-1g.10gb": 1}
    import kubernetes_validate

    kubernetes_validate.validate(doc, "1.30.0", strict=True)


def test_slurm_header_golden() -> None:
    text = export("slurm", *FOUR_GPU)
    assert "#SBATCH --gres=gpu:4" in text and "#SBATCH --nodes=1" in text
    golden("export_slurm_4gpu.sh", text)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--export", "docker"], "--export: unknown value 'docker'"),
        (
            [
                "--export",
                "skypilot",
                "--catalog",
                "article",
                "--max-gpus",
                "1",
                "--model",
                "llama-3.2-1b",
                "--task",
                "inference",
                "--services",
                "7",
                "--quant",
                "int4",
                "--hours",
                "10",
            ],
            "SkyPilot rents whole GPUs",
        ),
    ],
)
def test_export_errors_exit_2(args: list[str], expected: str) -> None:
    base = [] if "--task" in args else ["--task", "lora", "--model", "llama-2-7b"]
    result = run_cli("recommend", *base, *args)
    assert result.code == 2 and expected in result.stderr


def test_export_command_from_a_file() -> None:
    result = run_cli(
        "export", "slurm", "-f", str(SCENARIOS / "d02-train-1-7b.toml"), "--catalog", "article"
    )
    assert result.code == 0 and "#SBATCH --gres=gpu:2" in result.stdout


def test_services_become_pods_and_fixed_hours_do_not_stretch() -> None:
    text = export("kubernetes", "--task", "lora", "--model", "llama-3.1-8b", "--tokens", "2e8",
                  "--services", "3")  # fmt: skip
    doc = yaml.safe_load(text)
    assert doc["spec"]["parallelism"] == doc["spec"]["completions"] == 3
    slurm = run_cli(
        "export",
        "slurm",
        "-f",
        str(SCENARIOS / "d04-inference-at-scale.toml"),
        "--catalog",
        "article",
    )
    assert "#SBATCH --time=4-04:00:00" in slurm.stdout  # 100 h of serving, not stretched
    assert "#SBATCH --nodes=7" in slurm.stdout  # one node per isolated service


def test_exports_carry_the_chosen_configuration_as_launch_arguments() -> None:
    """Slurm, SkyPilot and Kubernetes all set WHICHGPU_LAUNCH_ARGS to the framework's own
    settings for the micro-batch, accumulation and recomputation whichgpu chose."""
    args = ("--task", "lora", "--model", "llama-3.1-8b", "--tokens", "2e8")
    slurm = run_cli("recommend", *args, "--framework", "torchtune", "--export", "slurm")
    assert slurm.code == 0, slurm.stderr
    line = next(x for x in slurm.stdout.splitlines() if x.startswith("export WHICHGPU_"))
    assert "batch_size=" in line and "gradient_accumulation_steps=8" in line
    assert slurm.stdout.rstrip().endswith("python train.py $WHICHGPU_LAUNCH_ARGS")
    sky = yaml.safe_load(export("skypilot", *args))
    assert sky["envs"]["WHICHGPU_LAUNCH_ARGS"].startswith("--per_device_train_batch_size ")
    kube = yaml.safe_load(export("kubernetes", *args))
    (container,) = kube["spec"]["template"]["spec"]["containers"]
    assert container["env"][0]["name"] == "WHICHGPU_LAUNCH_ARGS"
    assert "whichgpu/training" in kube["metadata"]["annotations"]


def test_megatron_launch_arguments_name_the_layout() -> None:
    from whichgpu.export import launch_arguments
    from whichgpu.requests import make_job

    job = make_job(task="train", batch=1, gpus=64, tp=8, pp=2, zero=1, grad_accum=32)
    assert launch_arguments("megatron", job) == (
        "--micro-batch-size 1 --global-batch-size 128 --tensor-model-parallel-size 8 "
        "--pipeline-model-parallel-size 2 --use-distributed-optimizer"
    )
    interleaved = make_job(task="train", batch=1, gpus=64, tp=8, pp=2, vp=4, zero=1)
    assert "--num-virtual-stages-per-pipeline-rank 4" in launch_arguments("megatron", interleaved)
    overlapped = make_job(task="train", batch=1, gpus=64, tp=8, pp=2, zero=1, tp_overlap=True)
    assert launch_arguments("megatron", overlapped).endswith("--tp-comm-overlap")


def test_nemo_launch_arguments_are_nemo_run_overrides() -> None:
    """NeMo 2.0 runs a recipe (``nemo llm pretrain --factory …``) with dotted overrides; its
    tensor-parallel overlap needs sequence parallelism."""
    from whichgpu.export import launch_arguments
    from whichgpu.requests import make_job

    job = make_job(task="train", framework="nemo", gpus=64, tp=4, pp=4, vp=5, grad_accum=32)
    assert launch_arguments("nemo", job) == (
        "data.micro_batch_size=1 data.global_batch_size=128 "
        "trainer.strategy.tensor_model_parallel_size=4 "
        "trainer.strategy.pipeline_model_parallel_size=4 "
        "trainer.strategy.virtual_pipeline_model_parallel_size=5 "
        "trainer.strategy.sequence_parallel=True"
    )


def test_the_layout_search_splits_405b_layers_unevenly_and_interleaves() -> None:
    """126 layers: the search offers 4, 8, 16 stages (not only 126's divisors, 1 and 2), each
    interleaved in chunks of two layers (16 a stage → 8 chunks)."""
    from whichgpu.estimate.parallel import training_layouts
    from whichgpu.models import resolve_model
    from whichgpu.requests import make_job

    arch = resolve_model("llama-3.1-405b")
    layouts = training_layouts(arch, make_job(task="train", batch=1), 512)
    stages = {(job.tp, job.pp): job.vp for job, _name in layouts if job.tp == 8}
    assert stages[(8, 8)] == 8 and stages[(8, 16)] == 4 and stages[(8, 1)] == 1
