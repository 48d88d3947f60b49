#!/usr/bin/python3
"""PyTorch DDP twin of `troupe bench dp` (apps/cmd_bench_dp.cpp), which launches it.

--procs processes (torch.multiprocessing spawn), gloo backend, initialised over a free TCP port
on 127.0.0.1, torch.set_num_threads(--threads) in every process. Same data as Troupe
(Fashion-MNIST IDX files, plain or .gz, scaled to [0,1]), same model (MLP 784-256-128-10 with
ReLU, or the small CNN: conv3x3 16 -> maxpool2 -> conv3x3 32 -> maxpool2 -> fc 128 -> 10, same
padding), SGD, --batch samples PER PROCESS (global batch --batch x --procs), each rank taking its
slice of one seeded global permutation per epoch.

Timing: the first --warmup steps are not timed. Rank 0 times from a barrier after the warm-up
to the end of step --steps (a barrier again) and prints ONE JSON line:
  {"samples_per_second": ..., "timed_steps": ..., "global_batch": ..., ...}
Run with Debian's python3 (python3-torch):
  /usr/bin/python3 apps/bench/ddp_train.py --procs 2 --model mlp --batch 64 --steps 200
"""
import argparse, ctypes, datetime, json, os, signal, socket, sys, time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

# The data and the models of `troupe bench train`'s PyTorch twin, beside this file.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_train import model_for, read_idx  # noqa: E402


def die_with_parent():
    """A rank must not outlive the launcher (killed by `timeout`, say): PR_SET_PDEATHSIG."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def worker(rank, a, port, out):
    die_with_parent()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=a.procs, timeout=datetime.timedelta(seconds=a.timeout))
    x = torch.from_numpy(read_idx(a.data, "train-images-idx3-ubyte").astype(np.float32) / 255.0)
    y = torch.from_numpy(read_idx(a.data, "train-labels-idx1-ubyte").astype(np.int64))
    x = x.unsqueeze(1)  # N x 1 x 28 x 28
    model = DDP(model_for(a.model))  # DDP broadcasts rank 0's initial parameters
    opt = torch.optim.SGD(model.parameters(), lr=a.lr)
    loss_fn = nn.CrossEntropyLoss()  # mean over the local batch; DDP averages over ranks
    n = x.shape[0]
    global_batch = a.batch * a.procs
    gen = torch.Generator().manual_seed(a.seed)
    order, begin, steps, samples = torch.randperm(n, generator=gen), 0, 0, 0
    t0 = None
    while steps < a.steps:
        if steps == a.warmup:
            dist.barrier()
            t0 = time.perf_counter()
        if begin >= n:  # a new epoch: a new permutation, as Troupe's sampler
            order, begin = torch.randperm(n, generator=gen), 0
        step_idx = order[begin:begin + global_batch]
        begin += global_batch
        per = (len(step_idx) + a.procs - 1) // a.procs
        idx = step_idx[rank * per:(rank + 1) * per]
        xb, yb = x[idx], y[idx]
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        steps += 1
        if t0 is not None:
            samples += len(step_idx)
    dist.barrier()
    seconds = time.perf_counter() - t0
    if rank == 0:
        out.put({"samples_per_second": samples / seconds, "timed_steps": a.steps - a.warmup,
                 "timed_seconds": seconds, "warmup_steps": a.warmup, "global_batch": global_batch,
                 "procs": a.procs, "threads": a.threads, "model": a.model, "backend": "gloo",
                 "final_loss": loss.item(), "torch": torch.__version__})
    dist.destroy_process_group()


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--procs", type=int, default=1)
    p.add_argument("--model", default="mlp", choices=["mlp", "cnn"])
    p.add_argument("--batch", type=int, default=64, help="per process")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--warmup", type=int, default=20, help="untimed first steps")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--timeout", type=float, default=300, help="gloo's deadline, seconds")
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    a = p.parse_args()
    if a.procs < 1 or a.batch < 1 or a.threads < 1 or not 0 <= a.warmup < a.steps:
        raise SystemExit("ddp_train.py: --procs, --batch, --threads >= 1; 0 <= --warmup < --steps")
    # gloo on loopback, whatever the host name resolves to.
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    os.environ["OMP_NUM_THREADS"] = str(a.threads)
    ctx = mp.get_context("spawn")
    out = ctx.SimpleQueue()
    mp.spawn(worker, args=(a, free_port(), out), nprocs=a.procs, join=True)
    if out.empty():
        raise SystemExit("ddp_train.py: rank 0 reported nothing")
    print(json.dumps(out.get()), flush=True)


if __name__ == "__main__":
    sys.exit(main())
