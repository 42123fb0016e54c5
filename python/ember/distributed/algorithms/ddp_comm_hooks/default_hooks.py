"""The standard DDP communication hooks: averaging all-reduce, and all-reduce in float16 or
bfloat16 (half the bytes on the wire, the result cast back into the bucket)."""

from ...._C import bfloat16, float16
from ... import distributed_c10d as dist

__all__ = [
    "allreduce_hook",
    "bf16_compress_hook",
    "bf16_compress_wrapper",
    "fp16_compress_hook",
    "fp16_compress_wrapper",
]


def _group(process_group):
    return process_group if process_group is not None else dist.group.WORLD


def _mean_async(process_group, tensor):
    """A future of the mean of tensor over the group (tensor is divided in place first)."""
    group = _group(process_group)
    tensor.div_(dist.get_world_size(group))
    work = dist.all_reduce(tensor, group=group, async_op=True)
    return work.get_future().then(lambda fut: fut.value()[0])


def allreduce_hook(process_group, bucket):
    """allreduce_hook(process_group, bucket) -> Future

    Averages the bucket over process_group (the default group when None): what DDP does with no
    hook registered."""
    return _mean_async(process_group, bucket.buffer())


def _compressed(dtype, process_group, bucket):
    buffer = bucket.buffer()
    fut = _mean_async(process_group, buffer.to(dtype))

    def decompress(f):
        buffer.copy_(f.value())
        return buffer

    return fut.then(decompress)


def fp16_compress_hook(process_group, bucket):
    """fp16_compress_hook(process_group, bucket) -> Future

    Averages the bucket in float16: cast, divide by the group size, all-reduce, cast back."""
    return _compressed(float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    """bf16_compress_hook(process_group, bucket) -> Future

    Averages the bucket in bfloat16: cast, divide by the group size, all-reduce, cast back."""
    return _compressed(bfloat16, process_group, bucket)


def _compress_wrapper(dtype, hook):
    def wrapped(state, bucket):
        buffer = bucket.buffer()
        bucket.set_buffer(buffer.to(dtype))
        fut = hook(state, bucket)

        def decompress(f):
            value = f.value()
            buffer.copy_(value[0] if isinstance(value, list) else value)
            return buffer

        return fut.then(decompress)

    # torch's names (DDP refuses the bf16 one on the CPU by this name, as torch's)
    wrapped.__name__ = f"{'bf16' if dtype == bfloat16 else 'fp16'}_compress_wrapper_hook"
    return wrapped


def fp16_compress_wrapper(hook):
    """fp16_compress_wrapper(hook) -> Callable

    A hook that runs hook on the bucket cast to float16 and casts its result back."""
    return _compress_wrapper(float16, hook)


def bf16_compress_wrapper(hook):
    """bf16_compress_wrapper(hook) -> Callable

    A hook that runs hook on the bucket cast to bfloat16 and casts its result back."""
    return _compress_wrapper(bfloat16, hook)
