"""Reports: the verdict's types and its renderers (text, JSON, Markdown)."""
