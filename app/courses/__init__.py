"""Courses: the registry of courses (registry), each exercise's policy in a course (policies:
gradebook score, attempt budget) and the attempt budgets counted from it (budgets).

May import: core."""
