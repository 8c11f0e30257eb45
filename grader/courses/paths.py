"""Where the shipped problems, reference solutions and sandbox files live."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
PROBLEMS_DIR = ROOT / "problems"
REFERENCE_DIR = ROOT / "reference_solutions"
SANDBOX_DIR = ROOT / "grader" / "sandbox"
WORKER_FILE = SANDBOX_DIR / "worker.py"
