"""Courses: the registry of courses (registry), each exercise's policy in a course (policies:
gradebook score, attempt budget, due date) with the attempt budgets counted from it (budgets)
and the due dates, extensions and lateness (due_dates).

May import: core."""
