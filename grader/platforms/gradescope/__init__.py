"""Gradescope: the autograder zip, the run inside its container and its `results.json`."""
