"""`python -m msrunwatch` runs the command line."""

import sys

from msrunwatch.cli import main

sys.exit(main())
