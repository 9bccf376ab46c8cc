"""The HTML pages: the exercise page, the catalog, the staff dashboard's shell and the API docs.

May import: api, courses."""
