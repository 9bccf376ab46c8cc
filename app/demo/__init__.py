"""The demo course: `autograder demo-course` (commands) seeds a course of students, submissions
and reports (data, reports) for the staff's dashboard.

May import: core, courses, grading, staff."""
