"""Entry point: ``python -m order_guard_tools``."""

import sys

from order_guard_tools.cli import main

sys.exit(main())
