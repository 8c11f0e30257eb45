"""The `grader` command: click groups that parse options and call the library."""
