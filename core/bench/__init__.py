"""The benchmarks of ``jetlink bench``, apart from the domain modules they measure.

- engine.py: the engine's figures (publish, mirror / source catch-up, KV, cluster links,
  process start-up, ``validate`` as a process) and the alternating :func:`engine.pairs`;
- server.py: a private nats-server (the reference figures: its mirror / source catch-up) and
  the helpers that start and stop one;
- suite.py: ``jetlink bench all``, every benchmark as its own process and the project's goals
  judged.

cli/bench*.py parse and render; the Spark job benchmarks are in sparkops/bench.py.
"""
