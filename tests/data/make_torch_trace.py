"""Profile a few training steps of a small CNN with torch.profiler (CPU ops) and export the trace.

usage: make_torch_trace.py OUT.json [--batch N] [--no-shapes]
The steps are marked ProfilerStep#N (schedule: wait 1, warmup 1, active 6 -> steps 2..7).
"""
import sys

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile, schedule
from torch.utils.data import DataLoader, TensorDataset


def main():
    out = sys.argv[1]
    batch = int(sys.argv[sys.argv.index("--batch") + 1]) if "--batch" in sys.argv else 16
    shapes = "--no-shapes" not in sys.argv
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 8 * 8, 10))
    data = TensorDataset(torch.randn(batch * 10, 3, 32, 32), torch.randint(0, 10, (batch * 10,)))
    loader = DataLoader(data, batch_size=batch, num_workers=0)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    with profile(activities=[ProfilerActivity.CPU], record_shapes=shapes,
                 schedule=schedule(wait=1, warmup=1, active=6, repeat=1)) as prof:
        for x, y in loader:
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            prof.step()
    prof.export_chrome_trace(out)


if __name__ == "__main__":
    main()
