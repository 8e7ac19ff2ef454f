"""Vision models from their Hugging Face configs: ViT (``ViTForImageClassification``) and
ResNet (``ResNetForImageClassification``, the torchvision architecture of He et al., 2016)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from whichgpu.errors import InvalidInput
from whichgpu.models.arch import ModelArch, ParamCounts


def _labels(config: Mapping[str, Any]) -> int:
    labels = config.get("id2label")
    if isinstance(labels, Mapping) and labels:
        return len(labels)
    return int(config.get("num_labels", 1000))


def parse_vit(config: Mapping[str, Any]) -> ModelArch:
    """ViT (Dosovitskiy et al., 2021): patch embedding, class token, learned positions,
    pre-norm encoder layers, final LayerNorm and a linear classifier."""
    try:
        h = int(config["hidden_size"])
        n_layers = int(config["num_hidden_layers"])
        n_heads = int(config["num_attention_heads"])
        inter = int(config["intermediate_size"])
        image = int(config.get("image_size", 224))
        patch = int(config.get("patch_size", 16))
        channels = int(config.get("num_channels", 3))
    except (KeyError, TypeError, ValueError) as error:
        raise InvalidInput("vit_config", key=str(error)) from None
    patches = (image // patch) ** 2
    labels = _labels(config)
    params = ParamCounts(
        embedding=h + (patches + 1) * h + channels * patch * patch * h + h,
        attention=n_layers * (4 * h * h + 4 * h),
        mlp=n_layers * (2 * h * inter + inter + h),
        norms=n_layers * 4 * h + 2 * h,
        head=h * labels + labels,
    )
    return ModelArch(
        family="vit",
        kind="vit",
        params=params,
        active_params=params.total,
        n_layers=n_layers,
        hidden_size=h,
        n_heads=n_heads,
        n_kv_heads=n_heads,
        head_dim=h // n_heads,
        intermediate_size=inter,
        ffn_kind="mlp",
        norm="layernorm",
        image_size=image,
        tokens_per_image=patches + 1,
    )


def parse_resnet(config: Mapping[str, Any]) -> ModelArch:
    """ResNet with bottleneck blocks (He et al., 2016, table 1): a 7×7 stem, four stages of
    1×1–3×3–1×1 blocks (width/4 inside), a projection shortcut on each stage's first block,
    BatchNorm after every convolution (weight and bias; running statistics are buffers)."""
    if config.get("layer_type", "bottleneck") != "bottleneck":
        raise InvalidInput("resnet_bottleneck")
    try:
        depths = [int(d) for d in config["depths"]]
        widths = [int(w) for w in config["hidden_sizes"]]
        stem = int(config.get("embedding_size", 64))
        channels = int(config.get("num_channels", 3))
    except (KeyError, TypeError, ValueError) as error:
        raise InvalidInput("resnet_config", key=str(error)) from None
    convs = channels * stem * 7 * 7
    norms = 2 * stem
    width_in = stem
    for blocks, width in zip(depths, widths, strict=True):
        inner = width // 4
        for block in range(blocks):
            convs += width_in * inner + inner * inner * 9 + inner * width
            norms += 2 * (inner + inner + width)
            if block == 0:
                convs += width_in * width  # projection shortcut
                norms += 2 * width
            width_in = width
    labels = _labels(config)
    params = ParamCounts(other=convs, norms=norms, head=width_in * labels + labels)
    return ModelArch(
        family="resnet",
        kind="cnn",
        params=params,
        active_params=params.total,
        norm="batchnorm",
        image_size=int(config.get("image_size", 224)),
        stages=tuple(zip(depths, widths, strict=True)),
        stem_width=stem,
    )
