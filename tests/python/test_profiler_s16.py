"""torch 2.13's profiler rows for ops ember writes in Python and conv2d's FLOPs (session 16): the
input shapes of max_pool2d and the _like factories, the zero_ row of zeros, conv2d's with_flops
count, External ids counting on over profiles. Each case checks the expectation written here
under ember and, where torch is installed, under torch with the same code."""

import json

from _docs_check import _libs


def _rows(prof):
    return [
        (e.name, e.input_shapes, e.cpu_parent.name if e.cpu_parent else None) for e in prof.events()
    ]


def test_python_ops_list_their_input_shapes():
    for T in _libs():
        x = T.ones(2, 4, 8, 8)
        with T.profiler.profile(record_shapes=True) as prof:
            T.nn.functional.max_pool2d(x, 2)
            T.zeros_like(x[0, 0, 0])
            T.ones_like(x[0, 0, 0])
        rows = _rows(prof)
        assert ("aten::max_pool2d", [[2, 4, 8, 8], [], [], [], [], []], None) in rows, T.__name__
        like = [[8], [], [], [], [], []]
        assert ("aten::zeros_like", like, None) in rows, T.__name__
        assert ("aten::ones_like", like, None) in rows, T.__name__
        assert ("aten::empty_like", like, "aten::zeros_like") in rows, T.__name__
        grouped = [(e.key, e.input_shapes) for e in prof.key_averages(group_by_input_shape=True)]
        assert ("aten::max_pool2d", [[2, 4, 8, 8], [], [], [], [], []]) in grouped, T.__name__
        # without record_shapes, no shapes
        with T.profiler.profile() as prof:
            T.nn.functional.max_pool2d(x, 2)
        assert [r[1] for r in _rows(prof) if r[0] == "aten::max_pool2d"] == [[]], T.__name__


def test_zeros_zeroes_with_a_zero_row():
    for T in _libs():
        with T.profiler.profile(record_shapes=True, profile_memory=True) as prof:
            T.zeros(3)
            T.zeros_like(T.ones(2, 5))
            T.ones(4)
        rows = _rows(prof)
        assert ("aten::zero_", [[3]], "aten::zeros") in rows, T.__name__
        assert ("aten::zero_", [[2, 5]], "aten::zeros_like") in rows, T.__name__
        assert ("aten::fill_", [[4], []], "aten::ones") in rows, T.__name__
        fills = [r for r in rows if r[0] == "aten::fill_"]
        assert all(r[2] == "aten::ones" for r in fills), (T.__name__, fills)
        zero = {e.key: e for e in prof.key_averages()}["aten::zero_"]
        assert (zero.count, zero.cpu_memory_usage) == (2, 0), T.__name__


def test_conv2d_flops():
    for T in _libs():
        F = T.nn.functional
        conv = T.nn.Conv2d(1, 4, 3, padding=1)
        with T.profiler.profile(with_flops=True) as prof:
            conv(T.ones(2, 1, 8, 8))
            F.conv2d(
                T.ones(2, 4, 9, 11),
                T.ones(6, 2, 3, 2),
                stride=(2, 1),
                padding=(1, 2),
                dilation=(2, 1),
                groups=2,
            )
            F.conv2d(T.ones(1, 3, 5, 5), T.ones(2, 3, 1, 1), stride=2)
        flops = [e.flops for e in prof.events() if e.name == "aten::conv2d"]
        # 2 x batch x output pixels x kernel area x in_channels x out_channels / groups
        assert flops == [2 * 2 * 64 * 9 * 1 * 4, 2 * 2 * (4 * 14) * 6 * 4 * 6 // 2, 2 * 9 * 3 * 2]
        total = {e.key: e.flops for e in prof.key_averages()}["aten::conv2d"]
        assert total == sum(flops), T.__name__
        with T.profiler.profile() as prof:  # counted only when with_flops asks
            conv(T.ones(2, 1, 8, 8))
        assert [e.flops for e in prof.events() if e.name == "aten::conv2d"] == [0], T.__name__


def _external_ids(T, path, n):
    x = T.ones(3)
    with T.profiler.profile() as prof:
        for _ in range(n):
            x.neg()
    prof.export_chrome_trace(str(path))
    with open(path) as f:
        evs = json.load(f)["traceEvents"]
    return [e["args"]["External id"] for e in evs if e.get("cat") == "cpu_op"]


def test_external_ids_count_on_in_blocks_of_512(tmp_path):
    for T in _libs():
        prev = None
        for k, n in enumerate((3, 600, 2)):
            ids = _external_ids(T, tmp_path / f"{T.__name__}{k}.json", n)
            assert ids == list(range(ids[0], ids[0] + n)), T.__name__
            assert ids[0] % 512 == 1, T.__name__  # each profile starts a block
            if prev is not None:  # the block after the last id of the profile before
                assert ids[0] == -(-prev // 512) * 512 + 1, T.__name__
            prev = ids[-1]


def test_tensor_list_argument_shapes(tmp_path):
    for T in _libs():
        x = T.ones(3, 4)
        with T.profiler.profile(record_shapes=True) as prof:
            T.cat([x, x])
            x * 2
        ev = {e.name: e for e in prof.events()}
        # a tensor list is [] in input_shapes; its tensors' shapes are in the structured form
        assert ev["aten::cat"].input_shapes == [[], []], T.__name__
        assert ev["aten::cat"].structured_input_shapes == [[[3, 4], [3, 4]], []], T.__name__
        assert ev["aten::mul"].structured_input_shapes == [[3, 4], []], T.__name__
        grouped = [(e.key, e.input_shapes) for e in prof.key_averages(group_by_input_shape=True)]
        assert ("aten::cat", [[], []]) in grouped, T.__name__
        path = tmp_path / f"{T.__name__}.json"
        prof.export_chrome_trace(str(path))
        with open(path) as f:
            evs = json.load(f)["traceEvents"]
        dims = [e["args"]["Input Dims"] for e in evs if e.get("name") == "aten::cat"]
        assert dims == [[[[3, 4], [3, 4]], []]], T.__name__


def test_frees_of_blocks_allocated_before_the_profile_are_not_reported():
    for T in _libs():
        before = T.ones(100)
        with T.profiler.profile(profile_memory=True) as prof:
            del before  # allocated before: its free is not reported, as torch's allocator
            inside = T.ones(50)
            del inside  # allocated and freed inside: both reported
        memory = [e.cpu_memory_usage for e in prof.events() if e.name == "[memory]"]
        assert memory == [-200], (T.__name__, memory)
        ones = {e.key: e for e in prof.key_averages()}["aten::ones"]
        assert ones.cpu_memory_usage == 200, T.__name__


def test_zero_method_has_its_own_row():
    for T in _libs():
        x = T.ones(3)
        with T.profiler.profile(record_shapes=True) as prof:
            x.zero_()
        rows = _rows(prof)
        assert ("aten::zero_", [[3]], None) in rows, (T.__name__, rows)
        assert not [r for r in rows if r[0] == "aten::fill_"], (T.__name__, rows)
