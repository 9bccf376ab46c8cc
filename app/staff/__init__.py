"""What a course's staff (its admins and instructors, and LMS launches as Instructor or TA) see
and do across the course: its figures, gradebook, exports, regrades and exercise policies.
Every route here names its course by slug and answers 404 to anyone who is not its staff.

May import: core, api, access, courses, grading."""
