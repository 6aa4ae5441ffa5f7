"""`python -m tilebridge ...`: the `tilebridge` command."""

import sys

from .cli import main

sys.exit(main())
