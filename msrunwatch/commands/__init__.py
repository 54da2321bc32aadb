"""The subcommands: each module holds its parser and its handler."""
