"""Where the host time of a Rust launch goes, phase by phase (TILEBRIDGE_PROFILE=1).

    TILEBRIDGE_PROFILE=1 python benchmarks/launch_profile.py

Needs a GPU and the example extension installed. Prints microseconds per launch for
each phase, and the cost of a launch rejected by argument checks, for reference.
"""

import os

import torch

import tilebridge as tb
from tilebridge.verifier.bench import host_overhead_direct_us as per_call_us


def main():
    assert os.environ.get("TILEBRIDGE_PROFILE") == "1", "run with TILEBRIDGE_PROFILE=1"
    ext = tb.load("tilebridge_examples")
    n = 4096
    a, b, c = (torch.ones(n, device="cuda") for _ in range(3))
    raw = torch.cuda.current_stream().cuda_stream

    def rejected():
        try:
            ext.vector_add((3,), a, b, c, TILE=1024)
        except tb.ArgumentError:
            pass

    ext.vector_add((4,), a, b, c, TILE=1024)  # the JIT runs here, outside the profile
    before = ext._profile()
    default = per_call_us(lambda: ext.vector_add((4,), a, b, c, TILE=1024, sync=False))
    after = ext._profile()
    launches = after[0] - before[0]
    print(f"launch with torch's current stream: {default:.2f} us per call; phases per launch:")
    for (phase, t1), (_, t0) in zip(after[1], before[1]):
        print(f"  {phase:<10} {(t1 - t0) / launches / 1e3:7.2f} us")
    print(f"launch with stream=<int>:           {per_call_us(lambda: ext.vector_add((4,), a, b, c, TILE=1024, stream=raw, sync=False)):.2f} us")
    print(f"launch rejected by the grid check:  {per_call_us(rejected):.2f} us")
    print(f"torch.add(out=) for scale:          {per_call_us(lambda: torch.add(a, b, out=c)):.2f} us")
    print(f"a call into the extension (no args): {per_call_us(ext._launch_counts):.2f} us")
    tracked(ext, a, b, c)


def tracked(ext, a, b, c):
    """The ownership-tracked launch (`tb.kernels(ext).k.launch`), and where its time goes."""
    import cProfile
    import pstats

    k = tb.kernels(ext).vector_add
    ha, hb, hc = (tb.Tensor.from_torch(t) for t in (a, b, c))
    window = []

    def launch():
        window.append(k.launch((4,), ha, hb, hc, TILE=1024))
        if len(window) > 64:
            window.pop(0).sync()

    us = per_call_us(launch)
    for p in window:
        p.sync()
    window.clear()
    print(f"tracked launch (handles, lending, a completion): {us:.2f} us per call; its parts:")
    print(f"  launcher, after=[] (records a completion) "
          f"{per_call_us(lambda: ext.vector_add((4,), a, b, c, TILE=1024, sync=False, after=[])):.2f} us")
    print(f"  launcher alone                            "
          f"{per_call_us(lambda: ext.vector_add((4,), a, b, c, TILE=1024, sync=False)):.2f} us")
    done = ext.vector_add((4,), a, b, c, TILE=1024, sync=False, after=[])
    torch.cuda.synchronize()
    print(f"  completion.done(), completed              {per_call_us(done.done):.2f} us")
    print(f"  completion.wait(), completed              {per_call_us(done.wait):.2f} us")
    print(f"  launcher, after=[done] (same stream)      "
          f"{per_call_us(lambda: ext.vector_add((4,), a, b, c, TILE=1024, sync=False, after=[done])):.2f} us")
    pending = k.launch((4,), ha, hb, hc, TILE=1024)
    pending.sync()
    print(f"  Pending.sync(), synced                    {per_call_us(pending.sync):.2f} us")
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(2000):
        launch()
    profile.disable()
    for p in window:
        p.sync()
    pstats.Stats(profile).sort_stats("tottime").print_stats(12)


if __name__ == "__main__":
    main()
