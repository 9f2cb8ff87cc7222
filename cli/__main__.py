"""``python -m jetlink.cli``: the same as the ``jetlink`` console script."""

from jetlink.cli.main import run

if __name__ == "__main__":
    run()
