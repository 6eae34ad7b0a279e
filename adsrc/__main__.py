"""``python -m adsrc``: the same program as the ``adsrc`` console script."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
