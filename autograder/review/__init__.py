"""What the instructor opens to review: formgrader's review-only server and the answer-group page."""
