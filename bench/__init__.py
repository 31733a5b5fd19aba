"""Benchmarks: each module has ``main(argv)``; run with ``dspla bench NAME`` or
``python -m bench.NAME`` from a source checkout. They print medians and ratios measured in
one run; the machine is shared and noisy, so single times mean little."""
