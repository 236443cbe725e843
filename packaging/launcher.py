"""Entry point of the frozen desktop build (``ChatterboxDesk``): the same as ``python -m app``."""

import multiprocessing
import sys

from app.__main__ import main

if __name__ == "__main__":
    multiprocessing.freeze_support()
    sys.exit(main())
