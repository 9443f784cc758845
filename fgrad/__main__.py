import sys

from .tools.check import main

sys.exit(main())
