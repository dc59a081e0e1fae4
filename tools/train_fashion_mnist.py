#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Trains the small Fashion-MNIST CNN that ships as the `classify` example's default model.

Reads Debian's dataset-fashion-mnist (/usr/share/datasets/fashion-mnist, no download), trains a
three-block CNN on the CPU with fixed seeds, prints the train loss per epoch and the FP32 accuracy
on all 10,000 test images, and writes into models/fashion_mnist/:

  model.onnx           opset 13; input "input" float32 [N,1,28,28] (pixels / 255, nothing else),
                       output "logits" float32 [N,10]; the batch axis is dynamic
  labels.txt           the 10 class names, one per line, in class-index order
  images/*.png         one 28x28 grayscale test image per class (see pick_samples for the rule)
  images/*_112.jpg     two of them again as 112x112 RGB JPEGs, to exercise decode+gray+resize
  images/expected.txt  "<file> <label index> <top-1 probability>" per image, from torch

Run from the repository root (Debian's python3-torch, -torchvision, -onnx, -pil, -numpy):

  /usr/bin/python3 tools/train_fashion_mnist.py

It takes about three minutes on two idle cores (12 epochs of ~13 s each). Seeds are fixed and
the kernels deterministic, so a rerun on the same machine should give the same model.
"""
import argparse
import gzip
import re
import time
from pathlib import Path

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image

LABELS = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
          "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]
JPEG_CANDIDATES = [7, 2, 9, 1, 5, 8, 0, 3, 4, 6]  # classes tried, in order, for the two JPEGs
MIN_PROB = 0.9                                      # a sample image must be this sure and right


def read_idx(path):
    """Reads an idx file (gzipped): idx3 ubyte images -> [N,28,28] uint8, idx1 labels -> [N]."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic = int.from_bytes(data[0:4], "big")
    ndim = magic & 0xFF
    if magic >> 8 != 0x08 or ndim not in (1, 3):  # 0x08: unsigned byte
        raise ValueError(f"{path}: not an idx ubyte file (magic {magic:#x})")
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    arr = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
    return arr.reshape(dims)


def load_split(data_dir, split):
    images = read_idx(data_dir / f"{split}-images-idx3-ubyte.gz")
    labels = read_idx(data_dir / f"{split}-labels-idx1-ubyte.gz")
    assert images.shape[0] == labels.shape[0]
    return images, labels


def to_input(images_u8):
    """uint8 [N,28,28] -> float32 [N,1,28,28] in [0,1]: the only preprocessing the model needs."""
    return torch.from_numpy(images_u8.astype(np.float32) / 255.0).unsqueeze(1)


class FashionCNN(nn.Module):
    """3 x (Conv3x3 + BN + ReLU + MaxPool2): 28 -> 14 -> 7 -> 3, then Flatten + Linear(576, 10)."""

    def __init__(self):
        super().__init__()

        def block(cin, cout):
            return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                    nn.ReLU(inplace=True), nn.MaxPool2d(2)]

        self.features = nn.Sequential(*block(1, 16), *block(16, 32), *block(32, 64))
        self.classifier = nn.Linear(64 * 3 * 3, 10)

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


def train(model, x, y, epochs, batch, gen):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    steps = (len(x) + batch - 1) // batch
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, epochs=epochs, steps_per_epoch=steps)
    for epoch in range(epochs):
        model.train()
        t0, total = time.time(), 0.0
        order = torch.randperm(len(x), generator=gen)
        for i in range(steps):
            idx = order[i * batch:(i + 1) * batch]
            xb, yb = x[idx], y[idx]
            # Augmentation: random horizontal flip (clothes are left/right symmetric enough).
            flip = torch.rand(len(idx), generator=gen) < 0.5
            xb = torch.where(flip.view(-1, 1, 1, 1), xb.flip(3), xb)
            loss = F.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(idx)
        print(f"epoch {epoch + 1:2d}/{epochs}  train loss {total / len(x):.4f}  ({time.time() - t0:.1f} s)",
              flush=True)


@torch.no_grad()
def predict(model, x, batch=1000):
    model.eval()
    return torch.cat([F.softmax(model(x[i:i + batch]), dim=1) for i in range(0, len(x), batch)])


def slug(label):
    return re.sub(r"[^a-z0-9]", "_", label.lower())


def pick_samples(test_y, probs):
    """For each class, the first test image (in file order) of that class that the trained model
    classifies correctly with probability >= MIN_PROB. Returns {class: test index}."""
    pred = probs.argmax(1).numpy()
    top = probs.max(1).values.numpy()
    picks = {}
    for i, (label, p, conf) in enumerate(zip(test_y.tolist(), pred.tolist(), top.tolist())):
        if label not in picks and p == label and conf >= MIN_PROB:
            picks[label] = i
        if len(picks) == len(LABELS):
            return picks
    raise RuntimeError(f"no confident sample for classes {sorted(set(range(10)) - set(picks))}")


def write_images(model, out, test_x_u8, test_y, probs):
    img_dir = out / "images"
    img_dir.mkdir(parents=True, exist_ok=True)
    for old in list(img_dir.glob("*.png")) + list(img_dir.glob("*.jpg")):
        old.unlink()
    picks = pick_samples(test_y, probs)
    lines = []
    for c, i in sorted(picks.items()):
        name = f"{c}_{slug(LABELS[c])}.png"
        Image.fromarray(test_x_u8[i]).save(img_dir / name)  # lossless: exactly the test pixels
        lines.append(f"{name} {c} {probs[i, c].item():.4f}")
        print(f"  {name:22s} test image #{i:<5d} p={probs[i, c].item():.4f}")

    # Two of them again as 112x112 RGB JPEGs. A JPEG is kept only if the model still gets it right
    # after the classify pipeline's steps (decode, PIL grayscale, PIL bilinear resize to 28x28,
    # which antialiases on downscale, / 255); otherwise the next candidate class is tried.
    jpegs = 0
    for c in JPEG_CANDIDATES:
        name = f"{c}_{slug(LABELS[c])}_112.jpg"
        big = Image.fromarray(test_x_u8[picks[c]]).resize((112, 112), Image.BILINEAR)
        big.convert("RGB").save(img_dir / name, quality=95)
        back = Image.open(img_dir / name).convert("L").resize((28, 28), Image.BILINEAR)
        p = predict(model, to_input(np.asarray(back)[None]))[0]
        if p.argmax().item() != c:
            print(f"  {name:22s} rejected: predicted {p.argmax().item()} (p={p.max().item():.4f})")
            (img_dir / name).unlink()
            continue
        lines.append(f"{name} {c} {p[c].item():.4f}")
        print(f"  {name:22s} from test image #{picks[c]:<5d} p={p[c].item():.4f}")
        jpegs += 1
        if jpegs == 2:
            break
    (img_dir / "expected.txt").write_text("\n".join(lines) + "\n")


def export_onnx(model, path):
    model.eval()
    torch.onnx.export(model, torch.zeros(1, 1, 28, 28), str(path), opset_version=13,
                      do_constant_folding=True, input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
    m = onnx.load(str(path))
    onnx.checker.check_model(m, full_check=True)
    ops = sorted({n.op_type for n in m.graph.node})
    print(f"wrote {path} ({path.stat().st_size} bytes, ops: {', '.join(ops)})")


def main():
    root = Path(__file__).resolve().parent.parent
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", type=Path, default=Path("/usr/share/datasets/fashion-mnist"))
    ap.add_argument("--out", type=Path, default=root / "models" / "fashion_mnist")
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    # Reproducible on one machine: fixed seeds, deterministic kernels, a fixed thread count.
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(2)
    gen = torch.Generator().manual_seed(args.seed)

    train_u8, train_y = load_split(args.data_dir, "train")
    test_u8, test_y = load_split(args.data_dir, "t10k")
    print(f"train {train_u8.shape}, test {test_u8.shape}")

    model = FashionCNN()
    t0 = time.time()
    train(model, to_input(train_u8), torch.from_numpy(train_y.astype(np.int64)), args.epochs, 128, gen)
    print(f"training took {time.time() - t0:.0f} s")

    probs = predict(model, to_input(test_u8))
    acc = (probs.argmax(1).numpy() == test_y).mean()
    print(f"FP32 test accuracy: {acc * 100:.2f}% on {len(test_y)} test images")

    args.out.mkdir(parents=True, exist_ok=True)
    export_onnx(model, args.out / "model.onnx")
    (args.out / "labels.txt").write_text("\n".join(LABELS) + "\n")
    write_images(model, args.out, test_u8, test_y, probs)


if __name__ == "__main__":
    main()
