"""What follows a report, sent from the database: the outbox's sender, parametrised by its
channel, and the webhook deliveries (webhooks); the LTI score posts are app.lti.passback's.

May import: core, api."""
