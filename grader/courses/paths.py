"""Where the built-in course and the sandbox files live."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
PROBLEMS_DIR = ROOT / "grader" / "courses" / "attention" / "problems"
SANDBOX_DIR = ROOT / "grader" / "sandbox"
WORKER_FILE = SANDBOX_DIR / "worker.py"
