"""Benchmarks for adsrc: workloads, hand-written gradients, adapters.

Run ``python benchmarks/run.py`` (see docs/performance.md). This is a package
only so that tests can import ``benchmarks.workloads`` and ``benchmarks.hand``;
nothing here is installed with adsrc.
"""
