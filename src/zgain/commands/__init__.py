"""Commands of the `zgain` command line (`zgain.app`), one module each."""
