"""`python3 -I path/to/sandbox/__main__.py ...` (the image's command) or `python3 -m sandbox
...`: the worker (see `sandbox/worker.py`)."""

import sys
from pathlib import Path

if not __package__:  # run as a file: the package is found beside it, whatever `sys.path` holds
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sandbox.worker import main

sys.exit(main())
