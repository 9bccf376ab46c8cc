"""The grading engine: sandboxed execution, comparison, diagnosis and reports."""
