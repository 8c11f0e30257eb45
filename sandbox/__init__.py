"""The sandbox: exactly what goes into the image (the worker and its Dockerfile). Standard
library, torch and safetensors only: nothing of `grader` is imported here."""
