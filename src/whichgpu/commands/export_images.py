"""The container image and GPU resource an exported pick runs with: its serving engine's
image (its ROCm one on an AMD GPU), else a training one, and the resource a Kubernetes pod
asks its GPUs by."""

from __future__ import annotations

from typing import TYPE_CHECKING

from whichgpu.errors import InvalidInput

if TYPE_CHECKING:
    from whichgpu.commands.recommend.options import Option

#: The default container image of a training pick (a served pick takes its engine's)
TRAIN_IMAGE = "nvcr.io/nvidia/pytorch:24.10-py3"
#: Its ROCm counterpart on AMD GPUs (rocm.docs.amd.com, "PyTorch on ROCm": docker pull
#: rocm/pytorch:latest)
ROCM_TRAIN_IMAGE = "rocm/pytorch:latest"
#: The resource a pod asks its GPUs by: NVIDIA's device plugin's, AMD's
#: (ROCm/k8s-device-plugin: amd.com/gpu)
GPU_RESOURCE = {"NVIDIA": "nvidia.com/gpu", "AMD": "amd.com/gpu"}
#: The Kubernetes Secret whose HF_TOKEN key a pod downloads a gated Hub model with (Dynamo's
#: envFromSecret, llm-d's authSecretName, a Deployment's env), one name in every export
HF_TOKEN_SECRET = "hf-token-secret"


def pick_image(option: Option, engine_id: str | None, container: bool) -> str:
    """The container image a pick runs in: its serving engine's (its ROCm one on an AMD
    GPU), else the training one; on an AMD GPU, an engine run in a container (a pod, a
    ``docker run``) whose ROCm image whichgpu does not know is refused in one line, which
    asks for one (deploy_rocm)."""
    from whichgpu.job.engine_releases import engine_profile

    amd = option.hardware.gpu.vendor == "AMD"
    if engine_id is None:
        return ROCM_TRAIN_IMAGE if amd else TRAIN_IMAGE
    engine = engine_profile(engine_id)
    if not amd:
        return engine.image
    if not engine.rocm_image and container:
        raise InvalidInput("deploy_rocm", engine=engine.name, gpu=option.hardware.gpu.name)
    return engine.rocm_image or engine.image
