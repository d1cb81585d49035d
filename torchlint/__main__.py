"""`python -m torchlint` is the same as the `torchlint` command."""

import sys

from torchlint.cli import main

if __name__ == "__main__":  # worker processes started by `spawn` (macOS, Windows) import this module too
    sys.exit(main())
