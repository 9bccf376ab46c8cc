"""The HTTP contract's shared parts: the dependencies every route takes (deps), domain errors and
their RFC 9457 problems (problems, problem_docs), the submissions' wire schemas
(submission_schemas), the security headers, what an API process holds (api_process), and how
`autograder serve` listens (serving).

May import: core, grading."""
