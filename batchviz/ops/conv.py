"""Two-dimensional convolution and max pooling (DyNet's ``conv2d``, ``conv2d_bias`` and
``maxpooling2d``): a CNN over the word vectors of a sentence laid out as an image one row
high, or over an image.

``conv2d(x, f, stride, valid, b)``: ``x`` is ``(H, W, C_in)`` (rows, columns, channels)
and ``f`` is ``(kH, kW, C_in, C_out)``. Output entry ``(i, j, o)`` is the sum, over the
window of ``x`` whose corner is at ``(i * sh, j * sw)``, of the window times ``f[..., o]``,
plus ``b[o]`` when there is a bias: a correlation (the filter is not flipped), as in
DyNet and TensorFlow. ``valid``: only windows inside ``x``; otherwise ``x`` is padded with
zeros so that the output has ``ceil(H / sh)`` rows and ``ceil(W / sw)`` columns ("SAME"),
the padding split as TensorFlow splits it (the odd row or column at the end).

An input may also hold ``m`` images, ``(H, W, C_in, m)``: the instances of a minibatch on
a last axis, batchviz's layout for manual batching (:mod:`batchviz.ops.columns`, and DyNet's
minibatches in :mod:`batchviz.dynet`); the output is then ``(H', W', C_out, m)``, every
image convolved by the same filter.

A batch's inputs are ``(n, H, W, C_in)`` (or ``(n, H, W, C_in, m)``). The kernel takes
every window of every input as a strided view of the padded inputs and multiplies them with
the filter in one ``tensordot`` (which copies the windows into its matrix once): ``n``
sentences of a minibatch are one product. A filter or bias that is a parameter is shared
(its node in the signature, App. A), as matmul's ``W`` is; the inputs' shape is in the
signature, so sentences of one length batch together.
"""
from __future__ import annotations

import numbers

from ..signature import shape_text
from .base import Op, register
from ._build import build
from .linalg import _factor_key


def output_size(size: int, kernel: int, stride: int, valid: bool) -> tuple:
    """``(output size, padding before, padding after)`` along one axis."""
    if valid:
        return (size - kernel) // stride + 1, 0, 0
    out = -(-size // stride)
    pad = max((out - 1) * stride + kernel - size, 0)
    return out, pad // 2, pad - pad // 2


def _windows(xp, padded, kH: int, kW: int, sh: int, sw: int, rows: int, cols: int):
    """Every ``(kH, kW)`` window of ``padded`` (``(n, H, W) + rest``) whose corner is a
    multiple of the strides: ``(n, rows, cols, kH, kW) + rest``, a view."""
    s = padded.strides
    return xp.lib.stride_tricks.as_strided(
        padded, shape=(padded.shape[0], rows, cols, kH, kW) + padded.shape[3:],
        strides=(s[0], s[1] * sh, s[2] * sw, s[1], s[2]) + s[3:])


def _pad(xp, x, top: int, bottom: int, left: int, right: int, value=0.0):
    """``x`` (``(n, H, W) + rest``) padded with ``value`` above, below, left and right."""
    if not (top or bottom or left or right):
        return x
    widths = ((0, 0), (top, bottom), (left, right)) + ((0, 0),) * (x.ndim - 3)
    return xp.pad(x, widths, constant_values=value)


def _with_instances(x, image_ndim: int):
    """``x`` with an axis of instances last: ``(n, H, W, C, m)`` as it is, ``(n, H, W, C)``
    as ``m = 1`` image each (a view)."""
    return x if x.ndim > image_ndim else x[..., None]


class Conv2D(Op):
    """``conv2d(x, f[, b])``; attributes ``(stride rows, stride columns, valid)``.

    The kernels work on inputs with an axis of instances, ``(n, H, W, C, m)``, one image
    (``m = 1``) being the common case, so that there is one version of each formula."""

    name = "conv2d"
    cheap = False
    arity = None

    def infer_shape(self, shapes, attrs):
        sh, sw, valid = attrs
        if len(shapes) not in (2, 3):
            raise self.error(f"takes an input, a filter and maybe a bias, got {len(shapes)} "
                             "arguments")
        x, f = shapes[0], shapes[1]
        if len(x) not in (3, 4) or len(f) != 4:
            raise self.error(f"the input must be (rows, columns, channels), or m of them "
                             f"(rows, columns, channels, m), and the filter (rows, columns, in "
                             f"channels, out channels), got {x} and {f}")
        if f[2] != x[2]:
            raise self.error(f"the filter reads {f[2]} channels but the input has {x[2]}")
        if valid and (f[0] > x[0] or f[1] > x[1]):
            raise self.error(f"a valid convolution needs the filter {f[:2]} to fit in the "
                             f"input {x[:2]}")
        if len(shapes) == 3 and shapes[2] != (f[3],):
            raise self.error(f"the bias must be a vector of the {f[3]} out channels, got "
                             f"{shapes[2]}")
        return (output_size(x[0], f[0], sh, valid)[0], output_size(x[1], f[1], sw, valid)[0],
                f[3]) + x[3:]

    def signature(self, graph, args, attrs, shape):
        parts, shared = [graph.shapes[args[0]]], []
        for pos in range(1, len(args)):
            part, is_shared = _factor_key(graph, args[pos])
            parts.append(part)
            if is_shared:
                shared.append(pos)
        return (self.name, *parts, attrs), tuple(shared)

    def describe_signature(self, key, graph=None):
        """``conv2d-4x5x2-F#1-b#2-stride1x2-same``: the input's shape, the filter (and
        bias), the strides and the padding."""
        sh, sw, valid = key[-1]
        rest = super().describe_signature(key[:-1], graph)
        return f"{rest}-stride{sh}x{sw}-{'valid' if valid else 'same'}"

    def _padded(self, xp, x, f_shape, attrs):
        sh, sw, valid = attrs
        (rows, top, bottom), (cols, left, right) = (
            output_size(x.shape[1], f_shape[0], sh, valid),
            output_size(x.shape[2], f_shape[1], sw, valid))
        return _pad(xp, x, top, bottom, left, right), rows, cols, (top, left)

    def forward(self, xp, ins, attrs, n):
        x, f = _with_instances(ins[0], 4), ins[1]
        shared = f.ndim == 4
        kH, kW = (f.shape[0], f.shape[1]) if shared else (f.shape[1], f.shape[2])
        padded, rows, cols, _ = self._padded(xp, x, (kH, kW), attrs[0])
        windows = _windows(xp, padded, kH, kW, attrs[0][0], attrs[0][1], rows, cols)
        if shared:    # (n, rows, cols, m, C_out), then the instances last
            out = xp.moveaxis(xp.tensordot(windows, f, axes=([3, 4, 5], [0, 1, 2])), 3, 4)
        else:
            out = xp.einsum("nhwabcm,nabco->nhwom", windows, f)
        if len(ins) == 3:
            b = ins[2]
            out += b[:, None] if b.ndim == 1 else b[:, None, None, :, None]
        return out if ins[0].ndim > 4 else out[..., 0]

    def backward(self, xp, ins, out, g, attrs, n, needs):
        x, f, g = _with_instances(ins[0], 4), ins[1], _with_instances(g, 4)
        sh, sw, _ = attrs[0]
        shared = f.ndim == 4
        kH, kW = (f.shape[0], f.shape[1]) if shared else (f.shape[1], f.shape[2])
        padded, rows, cols, (top, left) = self._padded(xp, x, (kH, kW), attrs[0])
        grads = [None] * len(ins)
        if needs[1]:
            windows = _windows(xp, padded, kH, kW, sh, sw, rows, cols)
            grads[1] = (xp.tensordot(windows, g, axes=([0, 1, 2, 6], [0, 1, 2, 4])) if shared
                        else xp.einsum("nhwabcm,nhwom->nabco", windows, g))
        if needs[0]:
            # the filter's tap (r, c) read the inputs at (i * sh + r, j * sw + c)
            d_padded = xp.zeros(padded.shape, dtype=g.dtype)
            for r in range(kH):
                for c in range(kW):
                    taps = (xp.tensordot(g, f[r, c], axes=([3], [1])) if shared
                            else xp.einsum("nhwom,nio->nhwmi", g, f[:, r, c]))
                    d_padded[:, r:r + sh * (rows - 1) + 1:sh, c:c + sw * (cols - 1) + 1:sw] += (
                        xp.moveaxis(taps, 3, 4))
            d_x = d_padded[:, top:top + x.shape[1], left:left + x.shape[2]]
            grads[0] = d_x if ins[0].ndim > 4 else d_x[..., 0]
        if len(ins) == 3 and needs[2]:
            grads[2] = g.sum(axis=(0, 1, 2, 4)) if ins[2].ndim == 1 else g.sum(axis=(1, 2, 4))
        return grads


class MaxPool2D(Op):
    """``maxpool2d(x)``: the maximum of every ``(kH, kW)`` window of every channel of ``x``
    (``(H, W, C)``, or ``m`` images ``(H, W, C, m)``, whose instances the kernels take as
    more channels), windows ``stride`` apart, with the padding of :class:`Conv2D` (a padded
    position is never the maximum). The gradient goes to the window's first maximum, in
    row-major order within the window, as DyNet's. Attributes ``(kH, kW, sh, sw, valid)``."""

    name = "maxpool2d"

    def infer_shape(self, shapes, attrs):
        kH, kW, sh, sw, valid = attrs
        x = shapes[0]
        if len(x) not in (3, 4):
            raise self.error(f"the input must be (rows, columns, channels), or m of them "
                             f"(rows, columns, channels, m), got {x}")
        if valid and (kH > x[0] or kW > x[1]):
            raise self.error(f"a valid pooling needs the window {(kH, kW)} to fit in the "
                             f"input {x[:2]}")
        return (output_size(x[0], kH, sh, valid)[0], output_size(x[1], kW, sw, valid)[0]) + x[2:]

    def signature(self, graph, args, attrs, shape):
        return (self.name, graph.shapes[args[0]], attrs), ()

    def describe_signature(self, key, graph=None):
        """``maxpool2d-4x3x3-window2x2-stride2x2-valid``."""
        kH, kW, sh, sw, valid = key[2]
        return (f"{self.name}-{shape_text(key[1])}-window{kH}x{kW}-stride{sh}x{sw}-"
                f"{'valid' if valid else 'same'}")

    def _taps(self, xp, x, attrs):
        """``(padded input, index of each window's maximum (n, rows, cols, C), rows, cols,
        padding before (top, left))``."""
        kH, kW, sh, sw, valid = attrs
        (rows, top, bottom), (cols, left, right) = (output_size(x.shape[1], kH, sh, valid),
                                                    output_size(x.shape[2], kW, sw, valid))
        x = _pad(xp, x, top, bottom, left, right, -xp.inf)
        windows = _windows(xp, x, kH, kW, sh, sw, rows, cols)
        flat = windows.reshape(windows.shape[:3] + (kH * kW, x.shape[3]))
        return x, flat, rows, cols, (top, left)

    @staticmethod
    def _channels(x):
        """``x`` (``(n, H, W, C)`` or ``(n, H, W, C, m)``) as ``(n, H, W, C * m)``."""
        return x.reshape(x.shape[:3] + (-1,))

    def forward(self, xp, ins, attrs, n):
        _, flat, _, _, _ = self._taps(xp, self._channels(ins[0]), attrs[0])
        out = flat.max(axis=3)
        return out.reshape(out.shape[:3] + ins[0].shape[3:])

    def backward(self, xp, ins, out, g, attrs, n, needs):
        kH, kW, sh, sw, _ = attrs[0]
        x, g = self._channels(ins[0]), self._channels(g)
        padded, flat, rows, cols, (top, left) = self._taps(xp, x, attrs[0])
        first_max = flat.argmax(axis=3)
        d_padded = xp.zeros(padded.shape, dtype=g.dtype)
        for r in range(kH):
            for c in range(kW):
                d_padded[:, r:r + sh * (rows - 1) + 1:sh, c:c + sw * (cols - 1) + 1:sw] += (
                    g * (first_max == r * kW + c))
        return [d_padded[:, top:top + x.shape[1], left:left + x.shape[2]].reshape(ins[0].shape)]


_CONV2D = register(Conv2D())
_MAXPOOL2D = register(MaxPool2D())


def _pair(value, what: str) -> tuple:
    values = tuple(value) if isinstance(value, (tuple, list)) else (value, value)
    if len(values) != 2 or not all(isinstance(v, numbers.Integral) and v >= 1 for v in values):
        raise ValueError(f"{what} must be two positive ints (rows, columns), got {value!r}")
    return int(values[0]), int(values[1])


def conv2d(x, f, stride=(1, 1), valid: bool = True, b=None):
    """The 2-D convolution of ``x`` (``(H, W, C_in)``, or ``m`` images ``(H, W, C_in, m)``)
    by ``f`` (``(kH, kW, C_in, C_out)``), ``stride`` apart, with only the windows inside
    ``x`` (``valid``) or ``x`` padded with zeros to ``ceil(H / sh) x ceil(W / sw)``
    outputs; plus the bias ``b`` (``(C_out,)``) when given. See the module's docstring."""
    sh, sw = _pair(stride, "conv2d: stride")
    args = (x, f) if b is None else (x, f, b)
    return build(_CONV2D, args, (sh, sw, bool(valid)))


def maxpool2d(x, size, stride=None, valid: bool = True):
    """The maximum of every ``size = (kH, kW)`` window of every channel of ``x`` (``(H, W,
    C)``, or ``m`` images ``(H, W, C, m)``), ``stride`` apart (default: ``size``, windows
    side by side), with only the windows inside ``x`` (``valid``) or ``x`` padded as
    :func:`conv2d` pads it."""
    kH, kW = _pair(size, "maxpool2d: size")
    sh, sw = _pair(size if stride is None else stride, "maxpool2d: stride")
    return build(_MAXPOOL2D, (x,), (kH, kW, sh, sw, bool(valid)))


__all__ = ["conv2d", "maxpool2d"]
