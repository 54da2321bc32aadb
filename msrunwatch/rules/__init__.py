"""The rule engine; the rule data lives in the top-level rules/ directory."""
