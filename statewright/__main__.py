import sys

from statewright.cli import main

sys.exit(main())
