# ruff: noqa: E501
"""Knowledge distillation as in the Hinton et al. recipe and the PyTorch KD tutorial: a wider
teacher CNN trained first, a small student trained on a mix of hard-label cross entropy and
nn.KLDivLoss(reduction="batchmean") between temperature-softened log-probabilities (scaled by
T^2), log_target=True variant, cosine-embedding loss on hidden representations through a
regressor, feature-map (hint) MSE, teacher frozen with requires_grad_(False) and eval(), and
the student's accuracy with and without distillation."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def det_init(module, scale=0.25, phase=0.0):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            k = torch.arange(p.numel(), dtype=torch.float32)
            p.copy_((torch.sin(k * 0.41 + 0.017 * k * k + i + phase) * scale).view_as(p))


def make_data(n=48):
    i = torch.arange(n)
    y = i % 4
    yy, xx = torch.meshgrid(torch.arange(8.0), torch.arange(8.0), indexing="ij")
    pats = torch.stack(
        [
            torch.sin(xx * 0.9),
            torch.cos(yy * 0.9),
            torch.sin((xx - yy) * 0.6),
            torch.cos((xx + yy) * 0.4),
        ]
    )
    x = pats[y] + 0.3 * torch.sin(i.float()[:, None, None] * 1.3 + xx * 0.2 + yy * 0.5)
    return x.unsqueeze(1), y


class Teacher(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(16, 16, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(16 * 16, 32), nn.ReLU(), nn.Linear(32, 4)
        )

    def forward(self, x):
        f = self.features(x)
        h = self.classifier[:3](f)
        return self.classifier[3](h), h, f


class Student(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(4 * 16, 16), nn.ReLU(), nn.Linear(16, 4)
        )
        self.regressor = nn.Conv2d(4, 16, 1)  # hint layer: student features -> teacher's channels

    def forward(self, x):
        f = self.features(x)
        h = self.classifier[:3](f)
        return self.classifier[3](h), h, self.regressor(f)


def accuracy(model, x, y):
    model.eval()
    with torch.no_grad():
        return (model(x)[0].argmax(1) == y).float().mean().item()


def train_teacher(teacher, x, y, epochs=8):
    opt = torch.optim.SGD(teacher.parameters(), lr=0.02, momentum=0.5)
    for _ in range(epochs):
        teacher.train()
        opt.zero_grad()
        loss = F.cross_entropy(teacher(x)[0], y)
        loss.backward()
        opt.step()
    return loss.item()


def train_student(student, teacher, x, y, mode, T=2.0, alpha=0.7, epochs=10):
    opt = torch.optim.Adam(student.parameters(), lr=0.003)
    ce = nn.CrossEntropyLoss()
    kl = nn.KLDivLoss(reduction="batchmean")
    kl_log = nn.KLDivLoss(reduction="batchmean", log_target=True)
    cos = nn.CosineEmbeddingLoss()
    teacher.eval()
    for _ in range(epochs):
        student.train()
        opt.zero_grad()
        s_logits, s_hidden, s_feat = student(x)
        loss = ce(s_logits, y)
        if mode != "none":
            with torch.no_grad():
                t_logits, t_hidden, t_feat = teacher(x)
            soft_t = F.softmax(t_logits / T, dim=-1)
            log_s = F.log_softmax(s_logits / T, dim=-1)
            if mode == "kl":
                soft = kl(log_s, soft_t) * T * T
            elif mode == "kl_log":
                soft = kl_log(log_s, F.log_softmax(t_logits / T, dim=-1)) * T * T
            elif mode == "manual":
                soft = torch.sum(soft_t * (soft_t.log() - log_s)) / log_s.size(0) * T**2
            elif mode == "hint":
                soft = F.mse_loss(s_feat, t_feat) + cos(
                    s_hidden, t_hidden[:, :16], torch.ones(x.size(0))
                )
            loss = alpha * soft + (1 - alpha) * loss
        loss.backward()
        opt.step()
    return loss.item()


def main():
    torch.manual_seed(0)
    x, y = make_data()
    teacher = Teacher()
    det_init(teacher)
    t_loss = train_teacher(teacher, x, y)
    teacher.requires_grad_(False)
    print(
        f"teacher loss {t_loss:.5f} acc {accuracy(teacher, x, y):.4f} frozen {not any(p.requires_grad for p in teacher.parameters())}"
    )
    with torch.no_grad():
        t_logits = teacher(x)[0]
    for T in (1.0, 4.0):
        p = F.softmax(t_logits[:2] / T, -1)
        print(
            f"soft_T{T:g} {[round(v, 4) for v in p[0].tolist()]} entropy {(-(p * p.log()).sum(-1)).mean().item():.4f}"
        )
    for mode in ("none", "kl", "kl_log", "manual", "hint"):
        student = Student()
        det_init(student, phase=0.5)
        loss = train_student(student, teacher, x, y, mode)
        print(f"student_{mode} loss {loss:.5f} acc {accuracy(student, x, y):.4f}")
    a = F.log_softmax(torch.tensor([[1.0, 2.0, 0.5]]), -1)
    b = F.softmax(torch.tensor([[0.2, 1.0, 1.5]]), -1)
    print(
        f"kl_forms {F.kl_div(a, b, reduction='sum').item():.6f} {F.kl_div(a, b.log(), reduction='sum', log_target=True).item():.6f} none {[round(v, 5) for v in F.kl_div(a, b, reduction='none')[0].tolist()]}"
    )
    print(
        f"grad_fn {type(F.kl_div(a.requires_grad_(), b, reduction='batchmean').grad_fn).__name__}"
    )


if __name__ == "__main__":
    main()
