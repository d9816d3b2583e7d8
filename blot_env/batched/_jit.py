"""Compile settings of the batched engine, and fixed-size scratch arrays on the stack.

Every kernel is compiled with ``_nrt=False``: numba's runtime (NRT) reference-counts each
array handed to a compiled helper with atomic increments and decrements, and with a call
tree as deep as one step of this engine those took about 60% of the step time (``perf`` on
``bench_env.py``'s batched loop; numba issue #2345 describes the effect). Without NRT a
kernel cannot allocate, so the few helpers that need scratch space get it from
:func:`stack_array`: an ``int64`` C array in the calling function's stack frame.
"""

from __future__ import annotations

import math

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

#: the decorator of every batched kernel (see the module docstring)
jit = njit(cache=True, error_model="numpy", _nrt=False)
#: the same, inlined into the caller at numba IR level
jit_inline = njit(cache=True, inline="always", error_model="numpy", _nrt=False)


def stack_array(shape: tuple[int, ...]):
    """A compiled intrinsic, ``buf = f()``, giving an uninitialised ``int64`` C-contiguous
    array of ``shape`` allocated in the caller's stack frame (freed when it returns).

    For small scratch buffers of kernels compiled without NRT; never return the array.
    """
    shape = tuple(int(s) for s in shape)
    size = math.prod(shape)
    arrty = types.Array(types.int64, len(shape), "C")
    strides = [8 * math.prod(shape[i + 1:]) for i in range(len(shape))]

    @intrinsic
    def _alloc(typingctx):
        def codegen(context, builder, signature, args):
            item = context.get_value_type(types.int64)
            ptr = cgutils.alloca_once(builder, ir.ArrayType(item, size))
            ary = make_array(arrty)(context, builder)
            intp = types.intp
            populate_array(ary, data=builder.bitcast(ptr, item.as_pointer()),
                           shape=[context.get_constant(intp, s) for s in shape],
                           strides=[context.get_constant(intp, s) for s in strides],
                           itemsize=context.get_constant(intp, 8), meminfo=None)
            return ary._getvalue()

        return arrty(), codegen

    return _alloc
