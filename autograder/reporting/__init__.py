"""Results as text for people and programs: feedback pages, grade CSVs, LMS imports."""
