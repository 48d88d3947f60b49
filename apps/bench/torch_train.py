#!/usr/bin/python3
"""PyTorch twin of `troupe bench train` for side-by-side comparison.

Same data (Fashion-MNIST IDX files, scaled to [0,1]), same model (MLP 784-256-128-10 with ReLU,
or the small CNN), same optimizer (Adam), same batch, same thread count, same timing rule: only
the training steps (batch gather, forward, backward, optimizer step) are timed.
Run with Debian's python3 (python3-torch): /usr/bin/python3 apps/bench/torch_train.py ...
"""
import argparse, gzip, json, os, struct, sys, time

import numpy as np
import torch
import torch.nn as nn


def read_idx(directory, name):
    """An IDX file as a numpy array: NAME.gz if present, else NAME (as Troupe's loader)."""
    path = os.path.join(directory, name)
    if os.path.exists(path + ".gz"):
        with gzip.open(path + ".gz", "rb") as f:
            data = f.read()
    else:
        with open(path, "rb") as f:
            data = f.read()
    magic = struct.unpack(">I", data[:4])[0]
    ndim = magic & 0xFF
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def model_for(kind):
    if kind == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128),
                             nn.ReLU(), nn.Linear(128, 10))
    if kind == "cnn":
        return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Flatten(), nn.Linear(32 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))
    raise SystemExit(f"unknown model {kind}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="mlp")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--max-steps", type=int, default=-1)
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--json")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    d = a.data
    x = torch.from_numpy(read_idx(d, "train-images-idx3-ubyte").astype(np.float32) / 255.0)
    y = torch.from_numpy(read_idx(d, "train-labels-idx1-ubyte").astype(np.int64))
    xt = torch.from_numpy(read_idx(d, "t10k-images-idx3-ubyte").astype(np.float32) / 255.0)
    yt = torch.from_numpy(read_idx(d, "t10k-labels-idx1-ubyte").astype(np.int64))
    x, xt = x.unsqueeze(1), xt.unsqueeze(1)
    model = model_for(a.model)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    loss_fn = nn.CrossEntropyLoss(reduction="sum")
    n = x.shape[0]
    wall0 = time.perf_counter()
    train_s, samples, steps = 0.0, 0, 0
    for epoch in range(a.epochs):
        order = torch.randperm(n)
        for begin in range(0, n, a.batch):
            if 0 <= a.max_steps <= steps:
                break
            t0 = time.perf_counter()
            idx = order[begin:begin + a.batch]
            xb, yb = x[idx], y[idx]
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(xb), yb) / len(idx)
            loss.backward()
            opt.step()
            train_s += time.perf_counter() - t0
            samples += len(idx)
            steps += 1
    with torch.no_grad():
        out = model(xt)
        test_loss = loss_fn(out, yt).item() / len(yt)
        acc = (out.argmax(1) == yt).float().mean().item()
    wall = time.perf_counter() - wall0
    sps = samples / train_s
    print(f"torch {torch.__version__}  model {a.model}  threads {a.threads}  batch {a.batch}  "
          f"epochs {a.epochs}  steps {steps}")
    print(f"samples/s {sps:.1f}  test_accuracy {acc:.4f}  test_loss {test_loss:.4f}  "
          f"wall_seconds {wall:.2f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"samples_per_second": sps, "test_accuracy": acc, "test_loss": test_loss,
                       "wall_seconds": wall, "epochs": a.epochs, "batch": a.batch,
                       "threads": a.threads, "model": a.model, "steps": steps}, f, indent=2)


if __name__ == "__main__":
    sys.exit(main())
