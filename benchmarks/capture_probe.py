"""Can a tilebridge launch be captured into a CUDA graph? Tries torch.cuda.graph in each capture
mode, then a raw cudaStreamBeginCapture on a private stream, and prints what happens.

    python benchmarks/capture_probe.py      (GPU, example extension installed)
"""

import torch

import tilebridge as tb

ext = tb.load("tilebridge_examples")
N, T = 1 << 16, 1024
a = torch.randn(N, device="cuda"); b = torch.randn(N, device="cuda"); c = torch.empty(N, device="cuda")
ext.vector_add((N // T,), a, b, c, TILE=T)  # JIT
torch.cuda.synchronize()
for mode in ("relaxed", "thread_local", "global"):
    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g, capture_error_mode=mode):
            ext.vector_add((N // T,), a, b, c, TILE=T, sync=False)
        c.zero_(); g.replay(); torch.cuda.synchronize()
        print(mode, "raw launcher captured; replay correct:", torch.equal(c, a + b))
    except Exception as e:
        print(mode, "raw launcher FAILED:", repr(e)[:300])
        break
s = torch.cuda.Stream()
with torch.cuda.stream(s):
    ext.vector_add((N // T,), a, b, c, TILE=T, sync=False)
s.synchronize()
print("side-stream launch ok")
# capture via the raw CUDA API on our own stream (no torch graph machinery)
from cuda.bindings import runtime as rt
st = torch.cuda.Stream()
err, = rt.cudaStreamBeginCapture(st.cuda_stream, rt.cudaStreamCaptureMode.cudaStreamCaptureModeRelaxed)
print("begin", err)
try:
    ext.vector_add((N // T,), a, b, c, TILE=T, stream=st, sync=False)
    print("launched in capture")
except Exception as e:
    print("launch in capture failed:", repr(e)[:300])
res = rt.cudaStreamEndCapture(st.cuda_stream)
print("end", res[0])
