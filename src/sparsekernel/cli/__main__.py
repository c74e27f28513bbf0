"""``python -m sparsekernel.cli``: the same as the ``sparsekernel`` command."""

import sys

from . import main

sys.exit(main())
