"""The `hermes` command line: thin commands that call one function and print the result."""
