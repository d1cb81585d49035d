"""`python -m torchlint` is the same as the `torchlint` command."""

import sys

from torchlint.cli import main

sys.exit(main())
