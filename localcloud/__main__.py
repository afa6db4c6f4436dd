"""Entry point: ``python -m localcloud``."""

import sys

from localcloud.tools.cli import main

sys.exit(main())
