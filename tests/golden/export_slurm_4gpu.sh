#!/bin/bash
# whichgpu pick for this workload: 4 × A100 80GB SXM, about 64.6 h, about $248.17 (marketplace)
# GPU: NVIDIA A100 80GB SXM; a site may name its GRES type: --gres=gpu:TYPE:4
#SBATCH --job-name=whichgpu-job
#SBATCH --nodes=1
#SBATCH --gres=gpu:4
#SBATCH --ntasks-per-node=1
#SBATCH --time=4-00:53:00

torchrun train.py
