"""Where the built-in course lives."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
PROBLEMS_DIR = ROOT / "grader" / "courses" / "attention" / "problems"
