"""A tiny NVBench benchmark through cuda-bench (NVBench's Python package): y = a·x + y in torch, two sizes.

Run by benchmarks/harness_outputs_gpu.sh on a GPU; its --json file is the importer tests' real NVBench output.
"""

import sys

import cuda.bench as bench
import torch


def _stream(stream: bench.CudaStream, device: int) -> torch.cuda.ExternalStream:
    return torch.cuda.ExternalStream(stream_ptr=stream.addressof(), device=torch.cuda.device(device))


@bench.register()
@bench.axis.int64("Elements", [1 << 20, 1 << 24])
def axpy(state: bench.State) -> None:
    device = state.get_device()
    n = state.get_int64("Elements")
    with torch.cuda.stream(_stream(state.get_stream(), device)):
        x = torch.randn(n, device="cuda")
        y = torch.randn(n, device="cuda")
    state.add_element_count(n)
    state.add_global_memory_reads(2 * n * 4)
    state.add_global_memory_writes(n * 4)

    def launcher(launch: bench.Launch) -> None:
        with torch.cuda.stream(_stream(launch.get_stream(), device)):
            y.add_(x, alpha=2.0)

    # sync: torch may synchronize inside a launch (a lazily loaded module, an allocation), which would
    # deadlock behind NVBench's blocking kernel; its own pytorch example passes sync=True for that.
    state.exec(launcher, sync=True)


if __name__ == "__main__":
    bench.run_all_benchmarks(sys.argv)
