"""Grading a submission, on both paths: the job (job), who answers for an unfinished submission
(leases) and the sweeper that re-dispatches what nobody does, the embedded dispatcher, where a
report's figures are kept (report_store), the waiters woken when one is done, and every
process following the exercises folder (catalog_watch).

May import: core."""
