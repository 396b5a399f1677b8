"""Counts the multiply-adds of the convolutions and matrix products torch actually runs.

    with MacCounter() as counter:
        train_step(...)
    counter.records   # [(op, shapes, dtype, macs)], in the order they ran
    counter.total()

A TorchDispatchMode sees every ATen operator below autograd, so the count covers the
forward and whatever the backward passes really compute: a convolution_backward whose
output mask leaves out the input gradient (a first layer, or a pass restricted with
backward(inputs=...)) is counted without it. Element-wise work (norms, activations,
dropout, losses, the optimizer) is not counted; it is a small share of a step and its
cost is memory traffic, not multiply-adds.

Per operator:
  convolution         batch x (spatial size of the dense side) x weight elements, where the
                      dense side is the output of a convolution and the input of a
                      transposed one (every weight meets every position there once)
  convolution_backward  the forward's count for the input gradient and again for the
                      weight gradient, each only when its output mask asks for it
  mm / addmm / bmm    m x k x n (x batches)
"""

import math

import torch
from torch.utils._python_dispatch import TorchDispatchMode

_ATEN = torch.ops.aten


def conv_macs(x_shape, weight_shape, y_shape, transposed):
    dense = x_shape if transposed else y_shape
    return dense[0] * math.prod(dense[2:]) * math.prod(weight_shape)


class MacCounter(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.records = []

    def total(self):
        return sum(r[3] for r in self.records)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        op = func.overloadpacket
        if op is _ATEN.convolution:
            self._conv_forward(args, out)
        elif op is _ATEN.convolution_backward:
            self._conv_backward(args)
        elif op in (_ATEN.mm, _ATEN.addmm, _ATEN.bmm):
            self._matmul(op, args)
        return out

    # aten::convolution(input, weight, bias, stride, padding, dilation, transposed,
    #                   output_padding, groups)
    def _conv_forward(self, args, out):
        x, w, transposed = args[0], args[1], args[6]
        name = "conv_transpose fwd" if transposed else "conv fwd"
        self.records.append((name, tuple(w.shape), str(x.dtype),
                             conv_macs(x.shape, w.shape, out.shape, transposed)))

    # aten::convolution_backward(grad_output, input, weight, bias_sizes, stride, padding,
    #                            dilation, transposed, output_padding, groups, output_mask)
    def _conv_backward(self, args):
        dy, x, w, transposed, mask = args[0], args[1], args[2], args[7], args[10]
        macs = conv_macs(x.shape, w.shape, dy.shape, transposed)
        kind = "conv_transpose" if transposed else "conv"
        for wanted, part in zip(mask[:2], ("input grad", "weight grad")):
            if wanted:
                self.records.append((f"{kind} {part}", tuple(w.shape), str(dy.dtype), macs))

    def _matmul(self, op, args):
        a, b = (args[1], args[2]) if op is _ATEN.addmm else (args[0], args[1])
        batches = a.shape[0] if op is _ATEN.bmm else 1
        m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
        self.records.append((op.__name__, (tuple(a.shape), tuple(b.shape)), str(a.dtype),
                             batches * m * k * n))
