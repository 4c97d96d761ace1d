"""A small Google Benchmark suite (its Python bindings): summing n floats two ways."""

import math

import google_benchmark as benchmark


@benchmark.register(name="sum/builtin")
@benchmark.option.arg_names(["n"])
@benchmark.option.arg(1000)
@benchmark.option.arg(8000)
def sum_builtin(state):
    data = [float(i) for i in range(state.range(0))]
    while state:
        sum(data)


@benchmark.register(name="sum/fsum")
@benchmark.option.arg_names(["n"])
@benchmark.option.arg(1000)
@benchmark.option.arg(8000)
def sum_fsum(state):
    data = [float(i) for i in range(state.range(0))]
    while state:
        math.fsum(data)


if __name__ == "__main__":
    benchmark.main()
