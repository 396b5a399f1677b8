"""TF32 and cuDNN settings of a CUDA torch, and how to describe them in a result header.

"fp32" in gantry's CUDA backend means IEEE fp32 products (cuBLAS without TF32), so the
PyTorch yardstick switches TF32 off unless asked (--allow-tf32). torch >= 2.9 has the
fp32_precision settings ("ieee" / "tf32") and deprecates allow_tf32; mixing the two APIs
is not supported, so only one family is used: the new one where it exists.
"""

import torch


def _new_tf32_api():
    return (hasattr(torch.backends.cuda.matmul, "fp32_precision")
            and hasattr(getattr(torch.backends.cudnn, "conv", None), "fp32_precision"))


def set_tf32(enabled):
    if _new_tf32_api():
        mode = "tf32" if enabled else "ieee"
        torch.backends.cuda.matmul.fp32_precision = mode
        torch.backends.cudnn.conv.fp32_precision = mode
    else:
        torch.backends.cuda.matmul.allow_tf32 = enabled
        torch.backends.cudnn.allow_tf32 = enabled


def tf32_enabled():
    if _new_tf32_api():
        return (torch.backends.cuda.matmul.fp32_precision == "tf32"
                or torch.backends.cudnn.conv.fp32_precision == "tf32")
    return bool(torch.backends.cuda.matmul.allow_tf32 or torch.backends.cudnn.allow_tf32)


def tf32_description():
    if _new_tf32_api():
        return (f"matmul.fp32_precision={torch.backends.cuda.matmul.fp32_precision!r}, "
                f"cudnn.conv.fp32_precision={torch.backends.cudnn.conv.fp32_precision!r}")
    return (f"torch.backends.cuda.matmul.allow_tf32={torch.backends.cuda.matmul.allow_tf32}, "
            f"torch.backends.cudnn.allow_tf32={torch.backends.cudnn.allow_tf32}")


def configure(allow_tf32, cudnn_enabled, cudnn_benchmark):
    set_tf32(allow_tf32)
    torch.backends.cudnn.enabled = cudnn_enabled
    torch.backends.cudnn.benchmark = cudnn_benchmark


def header_lines(device, precision):
    """Two lines naming the GPU, torch, CUDA, cuDNN and the TF32 state."""
    props = torch.cuda.get_device_properties(device)
    tf32 = (f"TF32 {'ON (--allow-tf32)' if tf32_enabled() else 'OFF'} "
            f"for fp32 matmuls and convolutions ({tf32_description()})")
    cudnn = (f"cudnn {torch.backends.cudnn.version()}" if torch.backends.cudnn.enabled
             else "cudnn disabled (--no-cudnn)")
    return [
        f"dcgan_torch | device cuda:{device.index or 0} {torch.cuda.get_device_name(device)} "
        f"({props.total_memory / 2**30:.0f} GiB, {props.multi_processor_count} SMs) | "
        f"torch {torch.__version__} | CUDA {torch.version.cuda} | {cudnn} | "
        f"precision {precision}",
        f"  {tf32}; cudnn.benchmark {torch.backends.cudnn.benchmark}; "
        f"timing: CUDA events per step, synchronize around the timed loop",
    ]
