"""Regrades: an exercise's finished submissions in a course (all, or one student's) graded
again after the exercise changed, or when its staff ask.

    service  create (one active regrade per course, exercise and student-or-all), list, cancel;
             a submission's past reports
    runner   the background work: one submission at a time, behind students' new submissions,
             resumable from its cursor under a lease
    store    how one regraded report is kept: the old report into history (PastReport), the new
             one through app.grading.report_store, progress in the same transaction; a changed score
             posted again to the LMS and announced by webhook (`submission.regraded`)
    router   the staff's routes under /v1/courses/{course}/...

May import: core, api, access, grading, staff."""
