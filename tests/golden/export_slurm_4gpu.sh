#!/bin/bash
# whichgpu pick for this workload: 4 × A100 80GB SXM, about 79.7 h, about $305.96 (marketplace)
# GPU: NVIDIA A100 80GB SXM; a site may name its GRES type: --gres=gpu:TYPE:4
#SBATCH --job-name=whichgpu-job
#SBATCH --nodes=1
#SBATCH --gres=gpu:4
#SBATCH --ntasks-per-node=1
#SBATCH --time=4-18:48:00

# train llama-2-13b: ZeRO-3 over 4, micro-batch 4 × 128 accumulated (global batch 2048), recomputation full; $WHICHGPU_LAUNCH_ARGS: --per_device_train_batch_size 4 --gradient_accumulation_steps 128 --gradient_checkpointing --bf16 --deepspeed eyJ6ZXJvX29wdGltaXphdGlvbiI6eyJzdGFnZSI6M30sImJmMTYiOnsiZW5hYmxlZCI6ImF1dG8ifSwiZnAxNiI6eyJlbmFibGVkIjoiYXV0byJ9LCJ0cmFpbl9taWNyb19iYXRjaF9zaXplX3Blcl9ncHUiOiJhdXRvIiwiZ3JhZGllbnRfYWNjdW11bGF0aW9uX3N0ZXBzIjoiYXV0byIsInRyYWluX2JhdGNoX3NpemUiOiJhdXRvIiwiZ3JhZGllbnRfY2xpcHBpbmciOiJhdXRvIn0= (--deepspeed: {"zero_optimization":{"stage":3},"bf16":{"enabled":"auto"},"fp16":{"enabled":"auto"},"train_micro_batch_size_per_gpu":"auto","gradient_accumulation_steps":"auto","train_batch_size":"auto","gradient_clipping":"auto"}, base64-encoded)
export WHICHGPU_LAUNCH_ARGS='--per_device_train_batch_size 4 --gradient_accumulation_steps 128 --gradient_checkpointing --bf16 --deepspeed eyJ6ZXJvX29wdGltaXphdGlvbiI6eyJzdGFnZSI6M30sImJmMTYiOnsiZW5hYmxlZCI6ImF1dG8ifSwiZnAxNiI6eyJlbmFibGVkIjoiYXV0byJ9LCJ0cmFpbl9taWNyb19iYXRjaF9zaXplX3Blcl9ncHUiOiJhdXRvIiwiZ3JhZGllbnRfYWNjdW11bGF0aW9uX3N0ZXBzIjoiYXV0byIsInRyYWluX2JhdGNoX3NpemUiOiJhdXRvIiwiZ3JhZGllbnRfY2xpcHBpbmciOiJhdXRvIn0='
# a gated Hub model (Llama, Gemma) downloads with your token: export HF_TOKEN before sbatch

torchrun train.py
