"""The grading sandbox: the only place student code runs (SECURITY.md audits this package)."""
