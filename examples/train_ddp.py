"""Train a small CNN with DistributedDataParallel, fed by sluice: one process per GPU (or CPU
processes with gloo), each reading its own part of every epoch, with checkpoints that resume
mid-epoch, also on another number of processes.

    torchrun --nproc_per_node 2 examples/train_ddp.py DATA [--device cuda] [--epochs 2]
        [--checkpoint ckpt.pt [--resume]] [--stop-after STEPS] [--record DIR]
        [--backend nccl|gloo] [--decode-route auto|hardware|hybrid|cpu]

DATA is an ImageFolder tree (`sluice make-dataset DATA -n 512` makes one). What sluice does
here that a DataLoader + DistributedSampler would not:
  * the rank and world size come from torch.distributed; the ranks' parts of an epoch are
    disjoint and cover it, and every rank yields len(loader) batches (no hang at the epoch's end);
  * loader.state_dict() goes into the checkpoint; a resumed run continues mid-epoch with the
    batches the interrupted run had left, or, on another number of processes, with every sample
    the interrupted run had not yet seen, exactly once;
  * bad files are skipped and reported, not fatal (on_error="skip"): a batch left empty still
    takes part in the step, so DDP's all-reduce never waits for a missing rank.

--record DIR writes, per rank, one JSON line per step: epoch, step, and the dataset indices of
the batch (loader.last_indices), which tests use to check "exactly once" across ranks.
--stop-after STEPS saves the checkpoint after that many steps and exits, like a preempted job.
With more ranks than GPUs, ranks share GPUs (local rank modulo the GPU count): with
--backend gloo only, as NCCL refuses two ranks on one GPU.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

import sluice
import sluice.transforms as T

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


def small_cnn(num_classes: int) -> nn.Module:
    def block(cin: int, cout: int) -> nn.Module:
        return nn.Sequential(nn.Conv2d(cin, cout, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(cout),
                             nn.ReLU(inplace=True))
    return nn.Sequential(block(3, 32), block(32, 64), block(64, 128), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(128, num_classes))


# The handles of the last collectives, kept until the interpreter exits. Gloo's worker thread lets
# go of a finished collective (and the tensor in it) a moment after wait() returns; when that last
# release comes as the interpreter shuts down, it needs the GIL, and the process aborts ("terminate
# called without an active exception", torch 2.13 on CPU). Kept here, the last release is Python's.
_last_collectives: collections.deque = collections.deque(maxlen=4)


def sum_over_ranks(value: int, device: torch.device) -> int:
    t = torch.tensor([value], device=device)
    work = dist.all_reduce(t, async_op=True)
    work.wait()
    _last_collectives.append(work)
    return int(t)


def barrier() -> None:
    work = dist.barrier(async_op=True)
    work.wait()
    _last_collectives.append(work)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("data")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu", choices=["cpu", "cuda"])
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=64, help="per process")
    p.add_argument("--size", type=int, default=64, help="RandomResizedCrop output size")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--last-batch", default="partial", choices=["partial", "drop", "pad"])
    p.add_argument("--threads", type=int, default=None, help="sluice compute threads per process")
    p.add_argument("--checkpoint", help="path of the checkpoint to write (rank 0) and to resume from")
    p.add_argument("--resume", action="store_true", help="start from --checkpoint")
    p.add_argument("--save-every", type=int, default=0, help="also checkpoint every N steps")
    p.add_argument("--stop-after", type=int, default=0, help="checkpoint and exit after N steps")
    p.add_argument("--record", help="directory for one JSON-lines file per rank")
    p.add_argument("--backend", choices=["nccl", "gloo"], help="default: nccl on GPUs, gloo on the CPU")
    p.add_argument("--decode-route", default="auto", choices=["auto", "hardware", "hybrid", "cpu"],
                   help="GPU only: sluice's JPEG decoders")
    args = p.parse_args()

    cuda = args.device == "cuda"
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    gpu = local_rank % torch.cuda.device_count() if cuda else None
    if cuda:
        torch.cuda.set_device(gpu)
    dist.init_process_group(args.backend or ("nccl" if cuda else "gloo"))
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device(f"cuda:{gpu}" if cuda else "cpu")

    # rank and world_size come from torch.distributed; num_threads defaults to this process's
    # share of the machine's CPUs (torchrun's LOCAL_WORLD_SIZE).
    loader = sluice.Loader(
        args.data, [T.RandomResizedCrop(args.size), T.RandomHorizontalFlip(), T.Normalize(MEAN, STD)],
        batch_size=args.batch_size, shuffle=True, seed=args.seed, device=str(device),
        last_batch=args.last_batch, on_error="skip", num_threads=args.threads,
        **({"decode_route": args.decode_route} if cuda else {}))
    torch.manual_seed(args.seed)
    model = small_cnn(len(loader.classes)).to(device)
    model = DDP(model, device_ids=[gpu] if cuda else None)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)

    step = 0
    if args.resume and args.checkpoint and os.path.exists(args.checkpoint):
        ckpt = torch.load(args.checkpoint, map_location=device, weights_only=False)
        model.module.load_state_dict(ckpt["model"])
        opt.load_state_dict(ckpt["optimizer"])
        loader.load_state_dict(ckpt["loader"])  # the epoch it was in, from where it stopped
        step = ckpt["step"]
    start_epoch = loader.state_dict()["next_epoch"]
    if rank == 0:
        print(f"{world} process(es), {loader.num_samples} images, {len(loader)} batches of "
              f"{args.batch_size} per process per epoch, epochs {start_epoch}..{args.epochs - 1}"
              + (f", decode_route {loader.options.decode_route}" if cuda else ""), flush=True)

    def save() -> None:
        # Every rank has taken the same number of batches, so rank 0's loader state is the job's.
        if rank == 0 and args.checkpoint:
            tmp = args.checkpoint + ".tmp"
            torch.save({"model": model.module.state_dict(), "optimizer": opt.state_dict(),
                        "loader": loader.state_dict(), "step": step}, tmp)
            os.replace(tmp, args.checkpoint)
        barrier()

    record = None
    if args.record:
        os.makedirs(args.record, exist_ok=True)
        record = open(os.path.join(args.record, f"rank{rank}.jsonl"), "a")
    for epoch in range(start_epoch, args.epochs):
        loader.set_epoch(epoch)
        t0, seen, steps, total_loss = time.perf_counter(), 0, 0, 0.0
        for batch in loader:
            images, labels = batch[0], batch[1]
            # last_batch="pad" adds a mask: repeats that fill the last batch do not count.
            weight = batch[2].float() if len(batch) == 3 else torch.ones(len(labels), device=device)
            out = model(images)
            loss = (F.cross_entropy(out, labels, reduction="none") * weight).sum() / weight.sum().clamp(min=1)
            opt.zero_grad(set_to_none=True)
            loss.backward()  # DDP averages the gradients over ranks here
            opt.step()
            step += 1
            steps += 1
            seen += int(weight.sum())
            total_loss += float(loss.detach())
            if record:
                record.write(json.dumps({"epoch": epoch, "step": step, "indices": loader.last_indices.tolist(),
                                         "valid": weight.bool().tolist()}) + "\n")
                record.flush()
            if args.stop_after and step == args.stop_after:
                save()
                if rank == 0:
                    print(f"stopped after step {step} (epoch {epoch}); checkpoint saved", flush=True)
                dist.destroy_process_group()
                return
            if args.save_every and step % args.save_every == 0:
                save()
        total = sum_over_ranks(seen, device)
        if rank == 0:
            dt = time.perf_counter() - t0
            print(f"epoch {epoch}: {total} images over {world} process(es) in {dt:.1f}s "
                  f"({total / dt:,.0f} images/s), mean loss {total_loss / max(1, steps):.3f}",
                  flush=True)
        skipped = loader.stats()["skipped_count"]
        if skipped:
            print(f"rank {rank}: skipped {skipped} bad file(s) so far: {loader.stats()['skipped'][:3]}", flush=True)
        save()
    if cuda:
        print(f"rank {rank}: samples per decode route {loader.stats()['route_samples']}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
