"""Commands of the `zgain` command line (`zgain.cli.app`), one module each."""
