"""The bundle's entry point: ``sparrow-desktop`` as a frozen program."""

import multiprocessing
import sys

from desktop.main import main

if __name__ == "__main__":
    # A frozen program re-runs itself for any multiprocessing child: let that child
    # do its work instead of opening a second window.
    multiprocessing.freeze_support()
    sys.exit(main())
