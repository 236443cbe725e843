"""The one inference thread: jobs in through a two-priority scheduler (interactive before background), events out."""
