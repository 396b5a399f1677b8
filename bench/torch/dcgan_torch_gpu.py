#!/usr/bin/env python3
"""Former name of bench/torch/dcgan_torch.py, kept so that existing commands still work.

It runs dcgan_torch.py with the same arguments; the one difference is the default device,
which stays what it was here: cuda when torch sees a GPU, else cpu.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import dcgan_torch  # noqa: E402

if __name__ == "__main__":
    sys.exit(dcgan_torch.main(default_device="cuda" if torch.cuda.is_available() else "cpu",
                              prog="dcgan_torch_gpu.py"))
