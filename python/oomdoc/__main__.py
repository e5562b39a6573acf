"""python -m oomdoc: the same as the oomdoc command."""
import sys

from ._cli import main

sys.exit(main())
