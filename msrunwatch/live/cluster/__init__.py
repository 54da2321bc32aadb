"""The central view of a job on many nodes (`watch --cluster SOURCE...`): every node's live
snapshot pulled (from its watcher's `/facts`, or a shared directory), merged and judged as
`triage FACTS...` judges them, each node shown reporting, stale, blind or ended."""
