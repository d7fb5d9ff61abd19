"""The arms of the ladder as data: the arm table, each arm's prompt policy, what it shows, ask back."""
