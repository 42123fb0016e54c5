# ruff: noqa: E501
"""Neural style transfer in the style of the PyTorch tutorial, on a tiny random-free CNN:
a normalization module, rebuilding a feature extractor with add_module and replacing
in-place ReLUs, content and style losses (Gram matrices) inserted as transparent modules,
optimizing the input image with LBFGS and a closure that clamps in place, plus
total-variation regularization and feature hooks for activation statistics."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def det_init(module, scale=0.3):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            n = p.numel()
            k = torch.arange(n, dtype=torch.float32)
            p.copy_((torch.sin(k * 0.53 + 0.019 * k * k + i) * scale).view_as(p))


def image(kind, size=16):
    yy, xx = torch.meshgrid(torch.linspace(0, 1, size), torch.linspace(0, 1, size), indexing="ij")
    if kind == "content":
        r = ((xx - 0.5) ** 2 + (yy - 0.5) ** 2).sqrt()
        chans = [(r < 0.3).float(), 1 - xx, yy]
    else:
        chans = [
            0.5 + 0.5 * torch.sin(xx * 20),
            0.5 + 0.5 * torch.cos(yy * 15),
            0.5 + 0.5 * torch.sin((xx + yy) * 10),
        ]
    return torch.stack(chans).unsqueeze(0)


class ContentLoss(nn.Module):
    def __init__(self, target):
        super().__init__()
        self.target = target.detach()

    def forward(self, input):
        self.loss = F.mse_loss(input, self.target)
        return input


def gram_matrix(input):
    a, b, c, d = input.size()
    features = input.view(a * b, c * d)
    G = torch.mm(features, features.t())
    return G.div(a * b * c * d)


class StyleLoss(nn.Module):
    def __init__(self, target_feature):
        super().__init__()
        self.target = gram_matrix(target_feature).detach()

    def forward(self, input):
        self.loss = F.mse_loss(gram_matrix(input), self.target)
        return input


class Normalization(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        self.mean = torch.tensor(mean).view(-1, 1, 1)
        self.std = torch.tensor(std).view(-1, 1, 1)

    def forward(self, img):
        return (img - self.mean) / self.std


def get_style_model_and_losses(
    cnn,
    style_img,
    content_img,
    content_layers=("conv_4",),
    style_layers=("conv_1", "conv_2", "conv_3", "conv_4"),
):
    normalization = Normalization([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
    content_losses, style_losses = [], []
    model = nn.Sequential(normalization)
    i = 0
    for layer in cnn.children():
        if isinstance(layer, nn.Conv2d):
            i += 1
            name = f"conv_{i}"
        elif isinstance(layer, nn.ReLU):
            name = f"relu_{i}"
            layer = nn.ReLU(inplace=False)
        elif isinstance(layer, nn.MaxPool2d):
            name = f"pool_{i}"
        else:
            raise RuntimeError(f"Unrecognized layer: {layer.__class__.__name__}")
        model.add_module(name, layer)
        if name in content_layers:
            target = model(content_img).detach()
            content_loss = ContentLoss(target)
            model.add_module(f"content_loss_{i}", content_loss)
            content_losses.append(content_loss)
        if name in style_layers:
            target_feature = model(style_img).detach()
            style_loss = StyleLoss(target_feature)
            model.add_module(f"style_loss_{i}", style_loss)
            style_losses.append(style_loss)
    for i in range(len(model) - 1, -1, -1):
        if isinstance(model[i], (ContentLoss, StyleLoss)):
            break
    model = model[: (i + 1)]
    return model, style_losses, content_losses


def total_variation(img):
    return (img[..., 1:, :] - img[..., :-1, :]).abs().mean() + (
        img[..., :, 1:] - img[..., :, :-1]
    ).abs().mean()


def main():
    torch.manual_seed(0)
    cnn = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.ReLU(inplace=True),
        nn.Conv2d(8, 8, 3, padding=1),
        nn.ReLU(inplace=True),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1),
        nn.ReLU(inplace=True),
        nn.Conv2d(16, 16, 3, padding=1),
        nn.ReLU(inplace=True),
        nn.MaxPool2d(2),
    )
    det_init(cnn)
    cnn.eval().requires_grad_(False)
    content_img, style_img = image("content"), image("style")
    input_img = content_img.clone()
    model, style_losses, content_losses = get_style_model_and_losses(cnn, style_img, content_img)
    print(f"model_names {[n for n, _ in model.named_children()]}")
    input_img.requires_grad_(True)
    model.eval()
    model.requires_grad_(False)
    optimizer = torch.optim.LBFGS([input_img], max_iter=4)
    style_weight, content_weight = 1e5, 1.0
    run = [0]
    history = []
    for outer in range(5):

        def closure():
            with torch.no_grad():
                input_img.clamp_(0, 1)
            optimizer.zero_grad()
            model(input_img)
            style_score = sum(sl.loss for sl in style_losses) * style_weight
            content_score = sum(cl.loss for cl in content_losses) * content_weight
            loss = style_score + content_score + 0.1 * total_variation(input_img)
            loss.backward()
            run[0] += 1
            history.append((style_score.item(), content_score.item()))
            return style_score + content_score

        optimizer.step(closure)
    with torch.no_grad():
        input_img.clamp_(0, 1)
    print(
        f"closure_calls {run[0]} first {[round(v, 4) for v in history[0]]} last {[round(v, 4) for v in history[-1]]}"
    )
    print(
        f"image_range {input_img.min().item():.4f} {input_img.max().item():.4f} mean {input_img.mean().item():.5f} requires_grad {input_img.requires_grad} cnn_grad_free {all(p.grad is None for p in cnn.parameters())}"
    )
    print(f"lbfgs_state {sorted(k for k in optimizer.state[input_img] if not k.startswith('_'))}")

    # Activation statistics with hooks, and Gram matrix properties.
    stats = {}
    handles = [
        m.register_forward_hook(
            lambda mod, inp, out, name=name: stats.__setitem__(
                name, (out.mean().item(), (out > 0).float().mean().item())
            )
        )
        for name, m in cnn.named_children()
        if isinstance(m, nn.ReLU)
    ]
    cnn(style_img)
    for h in handles:
        h.remove()
    print(f"relu_stats {[(k, round(m, 5), round(f, 4)) for k, (m, f) in stats.items()]}")
    G = gram_matrix(cnn[:2](style_img))
    eig = torch.linalg.eigvalsh(G)
    print(
        f"gram_sym {torch.allclose(G, G.T)} psd {bool(eig.min() > -1e-6)} trace {G.trace().item():.6f}"
    )
    print(f"tv {total_variation(content_img).item():.5f} {total_variation(style_img).item():.5f}")


if __name__ == "__main__":
    main()
