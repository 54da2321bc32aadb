"""Issue 10: hostile and broken input. Each test here failed before its fix: forged numbers
and dates, YAML and regex bombs, files that are not files, output that could be forged."""
