#!/bin/bash
# whichgpu pick for this workload: 4 × A100 80GB SXM, about 88.3 h, about $338.91 (marketplace)
# GPU: NVIDIA A100 80GB SXM; a site may name its GRES type: --gres=gpu:TYPE:4
#SBATCH --job-name=whichgpu-job
#SBATCH --nodes=1
#SBATCH --gres=gpu:4
#SBATCH --ntasks-per-node=1
#SBATCH --time=5-02:06:00

torchrun train.py
