"""Training-config readers and the config linter (MindFormers YAML, MindSpeed-LLM scripts)."""
