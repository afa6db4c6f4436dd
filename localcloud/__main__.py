"""Entry point: ``python -m localcloud``."""

import sys

from localcloud.cli import main

sys.exit(main())
