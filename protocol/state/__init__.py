"""The task-state machine (Section 3.1), what a reply executes (receipts, bookings) and the compiled graphs."""
