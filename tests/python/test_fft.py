"""ember.fft against numpy.fft and torch.fft: every function, odd/prime/composite lengths, the
three norms, n/s and dims, real and complex inputs, and gradients (gradcheck, torch's grads)."""

import numpy as np
import pytest

import ember

RNG = np.random.default_rng(7)
LENGTHS = [1, 2, 3, 5, 7, 8, 12, 16, 17, 30, 31, 37, 64, 97, 100, 128, 210, 1000, 1001, 1024]
NORMS = [None, "backward", "ortho", "forward"]


def crand(*shape, dtype=np.complex128):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def rrand(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def close(e, ref, tol=1e-9):
    got = e.detach().numpy()
    ref = np.asarray(ref)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    scale = max(1.0, float(np.abs(ref).max())) if ref.size else 1.0
    np.testing.assert_allclose(got, ref, rtol=0, atol=tol * scale)


@pytest.mark.parametrize("n", LENGTHS)
def test_fft_ifft_lengths_match_numpy(n):
    x = crand(3, n)
    close(ember.fft.fft(ember.from_numpy(x)), np.fft.fft(x))
    close(ember.fft.ifft(ember.from_numpy(x)), np.fft.ifft(x))


@pytest.mark.parametrize("n", [1, 2, 3, 8, 9, 15, 101, 256, 1000, 1001])
def test_rfft_irfft_match_numpy(n):
    x = rrand(2, n)
    y = np.fft.rfft(x)
    close(ember.fft.rfft(ember.from_numpy(x)), y)
    close(ember.fft.irfft(ember.from_numpy(y), n=n), np.fft.irfft(y, n=n))
    if n > 1:  # the default output length 2 * (1 - 1) is invalid for one input
        close(ember.fft.irfft(ember.from_numpy(y)), np.fft.irfft(y))


@pytest.mark.parametrize("norm", NORMS)
def test_norms_every_1d_function(norm):
    x, r = crand(4, 10), rrand(4, 10)
    e, er = ember.from_numpy(x), ember.from_numpy(r)
    close(ember.fft.fft(e, norm=norm), np.fft.fft(x, norm=norm))
    close(ember.fft.ifft(e, norm=norm), np.fft.ifft(x, norm=norm))
    close(ember.fft.rfft(er, norm=norm), np.fft.rfft(r, norm=norm))
    close(ember.fft.irfft(e, norm=norm), np.fft.irfft(x, norm=norm))
    close(ember.fft.hfft(e, norm=norm), np.fft.hfft(x, norm=norm))
    close(ember.fft.ihfft(er, norm=norm), np.fft.ihfft(r, norm=norm))


def test_n_pads_and_cuts_and_dim():
    x = crand(5, 6, 7)
    e = ember.from_numpy(x)
    for n in (3, 7, 11):
        for dim in (0, 1, -1):
            close(ember.fft.fft(e, n=n, dim=dim), np.fft.fft(x, n=n, axis=dim))
            close(ember.fft.ifft(e, n=n, dim=dim), np.fft.ifft(x, n=n, axis=dim))
    r = rrand(5, 6, 7)
    er = ember.from_numpy(r)
    close(ember.fft.rfft(er, n=9, dim=1), np.fft.rfft(r, n=9, axis=1))
    close(ember.fft.irfft(e, n=9, dim=0), np.fft.irfft(x, n=9, axis=0))
    close(ember.fft.hfft(e, n=5, dim=1), np.fft.hfft(x, n=5, axis=1))


@pytest.mark.parametrize("norm", NORMS)
def test_nd_functions_match_numpy(norm):
    x, r = crand(3, 5, 6), rrand(3, 5, 6)
    e, er = ember.from_numpy(x), ember.from_numpy(r)
    close(ember.fft.fft2(e, norm=norm), np.fft.fft2(x, norm=norm))
    close(ember.fft.ifft2(e, norm=norm), np.fft.ifft2(x, norm=norm))
    close(ember.fft.fftn(e, norm=norm), np.fft.fftn(x, norm=norm))
    close(ember.fft.ifftn(e, norm=norm), np.fft.ifftn(x, norm=norm))
    close(ember.fft.rfft2(er, norm=norm), np.fft.rfft2(r, norm=norm))
    close(ember.fft.rfftn(er, norm=norm), np.fft.rfftn(r, norm=norm))
    close(ember.fft.irfft2(e, norm=norm), np.fft.irfft2(x, norm=norm))
    close(ember.fft.irfftn(e, norm=norm), np.fft.irfftn(x, norm=norm))
    close(
        ember.fft.fftn(e, s=(4, 7), dim=(0, 2), norm=norm),
        np.fft.fftn(x, s=(4, 7), axes=(0, 2), norm=norm),
    )
    close(ember.fft.irfftn(e, s=(4, 9), norm=norm), np.fft.irfftn(x, s=(4, 9), norm=norm))
    close(
        ember.fft.rfftn(er, s=(6, 4), dim=(1, 0), norm=norm),
        np.fft.rfftn(r, s=(6, 4), axes=(1, 0), norm=norm),
    )


def test_float32_and_integer_inputs():
    x = crand(4, 33, dtype=np.complex64)
    y = ember.fft.fft(ember.from_numpy(x))
    assert y.dtype == ember.complex64
    close(y, np.fft.fft(x.astype(np.complex128)), tol=1e-5)
    r = rrand(4, 33, dtype=np.float32)
    z = ember.fft.rfft(ember.from_numpy(r))
    assert z.dtype == ember.complex64
    close(z, np.fft.rfft(r.astype(np.float64)), tol=1e-5)
    i = ember.arange(8)
    assert ember.fft.fft(i).dtype == ember.complex64
    close(ember.fft.fft(i), np.fft.fft(np.arange(8)), tol=1e-5)


def test_freq_and_shift():
    for n in (1, 4, 5, 10):
        close(ember.fft.fftfreq(n, dtype=ember.float64), np.fft.fftfreq(n))
        close(ember.fft.fftfreq(n, 0.5, dtype=ember.float64), np.fft.fftfreq(n, 0.5))
        close(ember.fft.rfftfreq(n, 2.0, dtype=ember.float64), np.fft.rfftfreq(n, 2.0))
    assert ember.fft.fftfreq(4).dtype == ember.float32
    a = rrand(4, 5)
    close(ember.fft.fftshift(ember.from_numpy(a)), np.fft.fftshift(a))
    close(ember.fft.ifftshift(ember.from_numpy(a)), np.fft.ifftshift(a))
    close(ember.fft.fftshift(ember.from_numpy(a), dim=1), np.fft.fftshift(a, axes=1))
    c = crand(3, 4)
    close(ember.fft.fftshift(ember.from_numpy(c), dim=(0,)), np.fft.fftshift(c, axes=0))


def test_errors_as_torch():
    with pytest.raises(RuntimeError, match="real input"):
        ember.fft.rfft(ember.from_numpy(crand(4)))
    with pytest.raises(RuntimeError, match="Invalid normalization mode"):
        ember.fft.fft(ember.from_numpy(crand(4)), norm="bogus")
    with pytest.raises(RuntimeError, match="Invalid number of data points"):
        ember.fft.fft(ember.from_numpy(crand(4)), n=0)
    with pytest.raises(IndexError):
        ember.fft.fft(ember.from_numpy(crand(4)), dim=1)


def test_edge_errors_match_torch():
    """0-d inputs, repeated dims and half precision: torch's classes and messages."""
    torch = pytest.importorskip("torch")
    cases = {
        "fft_0d": lambda m: m.fft.fft(m.tensor(1.0)),
        "fft2_0d": lambda m: m.fft.fft2(m.tensor(1.0)),
        "fftshift_0d": lambda m: m.fft.fftshift(m.tensor(1.0), 0),
        "fftshift_dim": lambda m: m.fft.fftshift(m.ones(2, 3), 2),
        "fftn_dup": lambda m: m.fft.fftn(m.ones(2, 3), dim=(0, -2)),
        "rfft2_dup": lambda m: m.fft.rfft2(m.ones(2, 3), dim=(1, 1)),
        "fft_half": lambda m: m.fft.fft(m.ones(4, dtype=m.float16)),
        "ifft_half": lambda m: m.fft.ifft(m.ones(4, dtype=m.float16)),
        "rfft_bf16": lambda m: m.fft.rfft(m.ones(4, dtype=m.bfloat16)),
    }
    for name, f in cases.items():
        got, want = [], []
        for lib, out in ((ember, got), (torch, want)):
            try:
                f(lib)
            except Exception as e:  # noqa: BLE001  (class and message compared)
                out.append((type(e).__name__, str(e)))
        assert got == want, name


def test_matches_torch_fft():
    torch = pytest.importorskip("torch")
    x = crand(2, 45)
    r = rrand(2, 45)
    for name, arg in [
        ("fft", x),
        ("ifft", x),
        ("rfft", r),
        ("irfft", x),
        ("hfft", x),
        ("ihfft", r),
        ("fft2", x),
        ("rfftn", r),
        ("irfftn", x),
    ]:
        for norm in NORMS:
            ref = getattr(torch.fft, name)(torch.from_numpy(arg), norm=norm).resolve_conj().numpy()
            close(getattr(ember.fft, name)(ember.from_numpy(arg), norm=norm), ref)


def test_gradcheck_transforms():
    x = ember.from_numpy(crand(2, 6)).requires_grad_()
    r = ember.from_numpy(rrand(2, 7)).requires_grad_()
    for norm in NORMS:
        assert ember.autograd.gradcheck(lambda t: ember.fft.fft(t, norm=norm), (x,))
        assert ember.autograd.gradcheck(lambda t: ember.fft.ifft(t, n=8, norm=norm), (x,))
        assert ember.autograd.gradcheck(lambda t: ember.fft.rfft(t, norm=norm), (r,))
        assert ember.autograd.gradcheck(lambda t: ember.fft.irfft(t, norm=norm), (x,))
        assert ember.autograd.gradcheck(lambda t: ember.fft.fftn(t, norm=norm), (x,))
        assert ember.autograd.gradcheck(lambda t: ember.fft.rfftn(t, norm=norm), (r,))
        assert ember.autograd.gradcheck(lambda t: ember.fft.irfftn(t, s=(2, 5), norm=norm), (x,))
        assert ember.autograd.gradcheck(lambda t: ember.fft.hfft(t, norm=norm), (x,))
        assert ember.autograd.gradcheck(lambda t: ember.fft.ihfft(t, norm=norm), (r,))
    # torch takes the inputs as a list too
    assert ember.autograd.gradcheck(lambda t: ember.fft.fftshift(t), [x])
    assert ember.autograd.gradgradcheck(lambda t: ember.fft.rfft(t).abs(), [r])


def test_grads_match_torch():
    torch = pytest.importorskip("torch")
    x, r = crand(3, 10), rrand(3, 11)
    cases = [
        (lambda m, t: m.fft.fft(t).abs().sum(), x),
        (lambda m, t: (m.fft.ifft(t, norm="ortho") * (1 + 2j)).real.pow(2).sum(), x),
        (lambda m, t: m.fft.rfft(t).abs().pow(2).sum(), r),
        (lambda m, t: m.fft.irfft(t, n=17).sin().sum(), x),
        (lambda m, t: m.fft.fftn(t).imag.sum(), x),
        (lambda m, t: m.fft.hfft(t).pow(2).sum(), x),
    ]
    for fn, a in cases:
        te = ember.from_numpy(a.copy()).requires_grad_()
        tt = torch.from_numpy(a.copy()).requires_grad_()
        fn(ember, te).backward()
        fn(torch, tt).backward()
        close(te.grad, tt.grad.resolve_conj().numpy(), tol=1e-8)


def test_batched_lines_over_threads():
    # many lines along an inner dim and along the last: the parallel split must not mix them
    x = crand(64, 48, 5)
    e = ember.from_numpy(x)
    close(ember.fft.fft(e, dim=1), np.fft.fft(x, axis=1))
    close(ember.fft.fft(e, dim=0), np.fft.fft(x, axis=0))
    close(ember.fft.ifftn(e, dim=(0, 2)), np.fft.ifftn(x, axes=(0, 2)))


@pytest.mark.parametrize("center", [True, False])
@pytest.mark.parametrize("win_length", [None, 12])
def test_stft_matches_torch(center, win_length):
    torch = pytest.importorskip("torch")
    x = rrand(2, 100)
    w = rrand(win_length or 16)
    for normalized in (False, True):
        kw = dict(
            n_fft=16,
            hop_length=5,
            win_length=win_length,
            center=center,
            normalized=normalized,
            return_complex=True,
        )
        ref = torch.stft(torch.from_numpy(x), window=torch.from_numpy(w), **kw).numpy()
        close(ember.stft(ember.from_numpy(x), window=ember.from_numpy(w), **kw), ref)
    ref = torch.stft(
        torch.from_numpy(x[0]),
        16,
        return_complex=False,
        window=torch.hann_window(16, dtype=torch.float64),
    ).numpy()
    close(
        ember.stft(
            ember.from_numpy(x[0]),
            16,
            return_complex=False,
            window=ember.hann_window(16, dtype=ember.float64),
        ),
        ref,
    )


def test_stft_istft_round_trip():
    x = rrand(3, 200)
    w = ember.hann_window(32, dtype=ember.float64)
    spec = ember.stft(ember.from_numpy(x), 32, hop_length=8, window=w, return_complex=True)
    assert spec.shape == (3, 17, 26)
    back = ember.istft(spec, 32, hop_length=8, window=w, length=200)
    close(back, x)
    with pytest.raises(RuntimeError, match="return_complex"):
        ember.stft(ember.from_numpy(x), 32)


def test_istft_matches_torch():
    torch = pytest.importorskip("torch")
    spec = crand(17, 9)
    w = np.hanning(34)[1:-1].copy()
    kw = dict(n_fft=32, hop_length=8, center=True)
    ref = torch.istft(torch.from_numpy(spec), window=torch.from_numpy(w), **kw).numpy()
    close(ember.istft(ember.from_numpy(spec), window=ember.from_numpy(w), **kw), ref, tol=1e-7)


def test_stft_gradcheck():
    x = ember.from_numpy(rrand(40)).requires_grad_()
    w = ember.hann_window(8, dtype=ember.float64)
    assert ember.autograd.gradcheck(
        lambda t: ember.stft(t, 8, hop_length=4, window=w, return_complex=True), (x,)
    )
