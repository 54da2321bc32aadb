"""msrunwatch: triage, lint and watch MindSpore msrun logs."""

__version__ = "0.1.0"
