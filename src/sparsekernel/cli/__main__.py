"""``python -m sparsekernel.cli``: the same as the ``sparsekernel`` command."""

import sys

from ._main import main

sys.exit(main())
